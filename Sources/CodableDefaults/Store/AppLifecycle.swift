#if os(iOS) || os(tvOS) || os(visionOS) || os(watchOS)
    import Foundation
#endif

/// Flushing every open store where an app is suspended instead of exiting.
///
/// On iOS, iPadOS, Mac Catalyst, tvOS, visionOS and watchOS the system suspends an app in the background and
/// later ends it with no `atexit` handler run, so changes still waiting for an ``Defaults/SaveMode/afterIdle(_:)``
/// timer would be lost. When the first store opens, the registry observes the app's own notifications, by
/// name (the library imports neither UIKit nor WatchKit), and flushes every open store, synchronously,
/// inside the notification: the system does not suspend the app before the notification's observers return,
/// and a save releases its lock file before it returns, so no lock is held across the suspension.
///
/// Not used: `ProcessInfo.performExpiringActivity(withReason:using:)` (iOS 8.2, tvOS 9, watchOS 2,
/// visionOS 1). It runs its block asynchronously, on another thread, so the flush would no longer be done
/// when the notification returns; the synchronous flush is what makes "on disk before the suspension" hold.
enum AppLifecycle {
    /// The notifications after which the app may be suspended or ended, by their names as the frameworks
    /// post them (the string values of the constants, as Apple's headers and documentation name them):
    ///
    /// - `UIApplicationDidEnterBackgroundNotification`, `UIApplicationWillTerminateNotification`:
    ///   `UIApplication.didEnterBackgroundNotification` and `.willTerminateNotification` (UIKit: iOS, iPadOS,
    ///   Mac Catalyst, tvOS, visionOS).
    /// - `WKApplicationDidEnterBackgroundNotification`: `WKApplication.didEnterBackgroundNotification` and
    ///   `WKExtension.applicationDidEnterBackgroundNotification` (WatchKit, watchOS 7 and later; one constant).
    static let suspensionNotificationNames = [
        "UIApplicationDidEnterBackgroundNotification",
        "UIApplicationWillTerminateNotification",
        "WKApplicationDidEnterBackgroundNotification",
    ]

    /// Observes ``suspensionNotificationNames`` in `NotificationCenter.default` for the life of the process,
    /// each calling ``StoreRegistry/saveAll(where:)`` on the posting thread (the main thread). Does nothing on
    /// macOS and Linux, where a process that is not killed exits and the `atexit` handler flushes. Called once.
    static func flushOnSuspension() {
        #if os(iOS) || os(tvOS) || os(visionOS) || os(watchOS)
            // Not compiled here (no Apple SDK on the Linux builder). `queue: nil` runs the block synchronously
            // on the posting thread; the center keeps the registration (and the block) until it is removed,
            // which it never is, so the returned token is not kept.
            for name in suspensionNotificationNames {
                _ = NotificationCenter.default.addObserver(
                    forName: Notification.Name(name), object: nil, queue: nil
                ) { _ in
                    StoreRegistry.saveAll()
                }
            }
        #endif
    }
}
