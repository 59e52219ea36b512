import Dispatch

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Tells a store when its file may have been changed by someone else: another process's save, the
/// command-line tool, a person editing, replacing (`mv`) or deleting and recreating it.
///
/// It watches the file's directory (a watch on the file alone would die at the first rename): with inotify
/// on Linux (one inotify descriptor for the whole process, whose directory events include a write to a file
/// in it), and on Apple platforms with a `DispatchSource` on the directory plus one on the file itself,
/// renewed each time the name gets a new file (a directory source does not fire for a file rewritten in
/// place). Where that is impossible (the directory does not exist yet, the
/// system's watch limit is reached) it falls back to comparing the file's `stat` once a second, and keeps
/// trying to upgrade. The callback only says "look again": the store compares the file's identity with the
/// version it last read or wrote, so its own writes are not mistaken for outside changes.
final class FileWatcher: Sendable {
    /// Whether the watcher runs, and how: on events (`registration`) or on the `stat` fallback (`poller`).
    private struct State {
        var running = false
        var registration: (any WatchRegistration)?
        var poller: (any DispatchSourceTimer)?
    }

    private let directory: String
    private let name: String
    private let queue: DispatchQueue
    private let onChange: @Sendable () -> Void
    private let state = Locked(State())

    /// How often the fallback compares the file's `stat`.
    static let pollInterval: DispatchTimeInterval = .seconds(1)

    /// Creates a stopped watcher for `directory/name`, or for every entry of `directory` when `name` is empty;
    /// `onChange` runs on `queue`.
    init(directory: String, name: String, queue: DispatchQueue, onChange: @escaping @Sendable () -> Void) {
        self.directory = directory
        self.name = name
        self.queue = queue
        self.onChange = onChange
    }

    deinit {
        stop()
    }

    #if CODABLE_DEFAULTS_TESTING
        /// Whether the watcher is running on the stat fallback rather than on events (for tests; debug builds only).
        var isPolling: Bool { state.withLock { $0.poller != nil } }
    #endif

    /// Starts watching. Calling it again does nothing.
    func start() {
        state.withLock { state in
            guard !state.running else { return }
            state.running = true
            upgradeOrPoll(&state)
        }
    }

    /// Stops watching and releases every descriptor. Calling it again does nothing.
    func stop() {
        state.withLock { state in
            state.running = false
            state.registration?.cancel()
            state.registration = nil
            state.poller?.cancel()
            state.poller = nil
        }
    }

    /// Tries to watch with events; on failure, polls.
    private func upgradeOrPoll(_ state: inout State) {
        guard state.running, state.registration == nil else { return }
        let registration = DirectoryEvents.register(directory: directory, name: name, queue: queue) {
            [weak self] event in
            self?.handle(event)
        }
        if let registration {
            state.registration = registration
            state.poller?.cancel()
            state.poller = nil
            // The file may have changed between the store's last read and the watch starting.
            queue.async { [onChange] in onChange() }
        } else if state.poller == nil {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + Self.pollInterval, repeating: Self.pollInterval)
            timer.setEventHandler { [weak self] in self?.poll() }
            timer.resume()
            state.poller = timer
        }
    }

    private func handle(_ event: DirectoryEvents.Event) {
        switch event {
        case .changed:
            onChange()
        case .directoryGone:
            state.withLock { state in
                state.registration = nil
                upgradeOrPoll(&state)
            }
            onChange()
        }
    }

    private func poll() {
        state.withLock { upgradeOrPoll(&$0) }
        onChange()
    }
}

/// A live directory watch; cancel it to stop the events.
protocol WatchRegistration: AnyObject, Sendable {
    /// Stops the events and releases what the watch holds.
    func cancel()
}

#if canImport(Glibc) || canImport(Musl)
    /// The process's one inotify descriptor, shared by every store: watches are counted per directory,
    /// events are routed to the registrations for the file name they concern.
    ///
    /// `@unchecked Sendable`: Dispatch does not mark its read source `Sendable`; this one is made and resumed
    /// in `init` and never touched again. The registrations are `Locked`.
    final class DirectoryEvents: @unchecked Sendable {
        /// What a registration is told.
        enum Event {
            /// Something happened to the file (written and closed, moved in or out, created, deleted).
            case changed
            /// The directory itself went away; the registration is dead.
            case directoryGone
        }

        private final class Registration: WatchRegistration, Sendable {
            let descriptor: Int32
            let name: String
            let queue: DispatchQueue
            let handler: @Sendable (Event) -> Void

            init(descriptor: Int32, name: String, queue: DispatchQueue, handler: @escaping @Sendable (Event) -> Void) {
                self.descriptor = descriptor
                self.name = name
                self.queue = queue
                self.handler = handler
            }

            func cancel() {
                DirectoryEvents.shared?.remove(self)
            }
        }

        private static let mask: UInt32 = UInt32(
            IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
                | IN_ONLYDIR)

        /// The shared instance, or `nil` when inotify is not available (then everyone polls).
        static let shared: DirectoryEvents? = DirectoryEvents()

        private let fd: Int32
        private let source: any DispatchSourceRead
        private let registrations = Locked<[Int32: [Registration]]>([:])

        private init?() {
            fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
            guard fd >= 0 else { return nil }
            source = DispatchSource.makeReadSource(
                fileDescriptor: fd, queue: DispatchQueue(label: "CodableDefaults.inotify"))
            source.setEventHandler { [unowned(unsafe) self] in self.drain() }
            source.resume()
        }

        /// Registers for events about `directory/name` (every entry when `name` is empty), or returns `nil` if the
        /// directory cannot be watched.
        static func register(
            directory: String, name: String, queue: DispatchQueue, handler: @escaping @Sendable (Event) -> Void
        ) -> (any WatchRegistration)? {
            guard let shared else { return nil }
            return shared.add(directory: directory, name: name, queue: queue, handler: handler)
        }

        private func add(
            directory: String, name: String, queue: DispatchQueue, handler: @escaping @Sendable (Event) -> Void
        ) -> Registration? {
            registrations.withLock { registrations in
                let descriptor = inotify_add_watch(fd, directory, Self.mask)
                guard descriptor >= 0 else { return nil }
                let registration = Registration(descriptor: descriptor, name: name, queue: queue, handler: handler)
                registrations[descriptor, default: []].append(registration)
                return registration
            }
        }

        private func remove(_ registration: Registration) {
            registrations.withLock { registrations in
                guard var list = registrations[registration.descriptor],
                    let index = list.firstIndex(where: { $0 === registration })
                else { return }
                list.remove(at: index)
                if list.isEmpty {
                    registrations[registration.descriptor] = nil
                    inotify_rm_watch(fd, registration.descriptor)
                } else {
                    registrations[registration.descriptor] = list
                }
            }
        }

        /// Reads every pending event and routes it.
        private func drain() {
            let capacity = 64 * 1024
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
            defer { buffer.deallocate() }
            while true {
                let count = read(fd, buffer, capacity)
                if count < 0 && Platform.errno == EINTR { continue }
                guard count > 0 else { return }
                var offset = 0
                var deliveries: [(Registration, Event)] = []
                registrations.withLock { registrations in
                    while offset + MemoryLayout<inotify_event>.size <= count {
                        let event = (buffer + offset).loadUnaligned(as: inotify_event.self)
                        let nameStart = buffer + offset + MemoryLayout<inotify_event>.size
                        let nameLength = Int(event.len)
                        offset += MemoryLayout<inotify_event>.size + nameLength
                        let list = registrations[event.wd] ?? []
                        if event.mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                            // The directory is gone (or moved away): these watches are over. A moved
                            // directory's watch lives on in the kernel unless it is removed.
                            if event.mask & UInt32(IN_IGNORED) == 0 && registrations[event.wd] != nil {
                                inotify_rm_watch(fd, event.wd)
                            }
                            for registration in list { deliveries.append((registration, .directoryGone)) }
                            registrations[event.wd] = nil
                            continue
                        }
                        if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                            for registrations in registrations.values {
                                for registration in registrations { deliveries.append((registration, .changed)) }
                            }
                            continue
                        }
                        guard nameLength > 0 else { continue }
                        let bytes = UnsafeRawBufferPointer(start: nameStart, count: nameLength)
                        let name = String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
                        for registration in list where registration.name.isEmpty || registration.name == name {
                            deliveries.append((registration, .changed))
                        }
                    }
                }
                for (registration, event) in deliveries {
                    registration.queue.async { registration.handler(event) }
                }
            }
        }
    }
#else
    /// Directory and file events on Apple platforms: a `DispatchSource` on the directory's descriptor, which
    /// fires when entries are added, removed or renamed (a save by rename, `mv`, a delete and recreate), and
    /// one on the file's own descriptor, which fires when the file is written, extended, has its attributes
    /// changed, or is deleted or renamed: so a file rewritten in place (truncated and written, appended to
    /// with `>>`, saved in place by an editor), which does not touch the directory, is noticed too, as
    /// inotify's `IN_CLOSE_WRITE` notices it on Linux.
    ///
    /// The file's source watches one inode: once that file is deleted or renamed (a save renames a new file
    /// over it, and xnu's rename posts `NOTE_DELETE` to the file it replaces: `bsd/vfs/kpi_vfs.c`), the
    /// source is cancelled and a new one is opened on whatever the name holds, at once and again at each
    /// directory event (which is also how a file that did not exist yet gets its source).
    ///
    /// Written against Apple's headers and documentation (`O_EVTONLY` in <sys/fcntl.h>,
    /// `DispatchSource.makeFileSystemObjectSource(fileDescriptor:eventMask:queue:)` and its `.write`,
    /// `.extend`, `.attrib`, `.delete`, `.rename`, `.revoke` events, which are kqueue's `EVFILT_VNODE`
    /// `NOTE_*` flags); not compiled or run here (no Apple SDK on the Linux builder).
    final class DirectoryEvents {
        /// What a registration is told.
        enum Event {
            /// Something in the directory, or the file, changed.
            case changed
            /// The directory itself went away; the registration is dead.
            case directoryGone
        }

        /// The events that end a source's watch: its inode is no longer (or no longer only) at its name.
        /// (Computed: Dispatch does not mark `FileSystemEvent` `Sendable`, which a stored `static let` needs.)
        private static var gone: DispatchSource.FileSystemEvent { [.delete, .rename, .revoke] }

        /// `@unchecked Sendable`: Dispatch does not mark its sources `Sendable`; `cancel()` is safe from any
        /// thread, the file's source is only reached under ``file``'s lock, and its events run on `queue`.
        private final class Registration: WatchRegistration, @unchecked Sendable {
            /// The file's source, and whether the registration was cancelled (then no new source is made).
            struct FileWatch {
                var source: (any DispatchSourceFileSystemObject)?
                var cancelled = false
            }

            let path: String
            let queue: DispatchQueue
            let handler: @Sendable (Event) -> Void
            var directory: (any DispatchSourceFileSystemObject)?
            let file = Locked(FileWatch())

            init(path: String, queue: DispatchQueue, handler: @escaping @Sendable (Event) -> Void) {
                self.path = path
                self.queue = queue
                self.handler = handler
            }

            /// Opens a source on the file now at `path`, unless one is open or there is no file (then the
            /// directory's source tells when one appears). Runs on `queue`, and once in `register`.
            func watchFile() {
                file.withLock { watch in
                    guard !watch.cancelled, watch.source == nil else { return }
                    // O_NONBLOCK: a FIFO at the name must not make the open wait for a writer.
                    let fd = open(path, O_EVTONLY | O_CLOEXEC | O_NONBLOCK)
                    guard fd >= 0 else { return }
                    let source = DispatchSource.makeFileSystemObjectSource(
                        fileDescriptor: fd, eventMask: [.write, .extend, .attrib, .delete, .rename, .revoke],
                        queue: queue)
                    source.setEventHandler { [weak self, unowned source] in
                        guard let self else { return }
                        if !source.data.intersection(DirectoryEvents.gone).isEmpty {
                            self.file.withLock { watch in
                                if watch.source === source { watch.source = nil }
                            }
                            source.cancel()
                            // A rename over the file leaves a new file at the name: watch it at once.
                            self.watchFile()
                        }
                        self.handler(.changed)
                    }
                    source.setCancelHandler { close(fd) }
                    source.resume()
                    watch.source = source
                }
            }

            deinit {
                cancel()
            }

            func cancel() {
                directory?.cancel()
                file.withLock { watch in
                    watch.cancelled = true
                    watch.source?.cancel()
                    watch.source = nil
                }
            }
        }

        /// Registers for events about `directory` and, when `name` is not empty, the file `directory/name`;
        /// returns `nil` if the directory cannot be watched.
        static func register(
            directory: String, name: String, queue: DispatchQueue, handler: @escaping @Sendable (Event) -> Void
        ) -> (any WatchRegistration)? {
            let fd = open(directory, O_EVTONLY | O_CLOEXEC)
            guard fd >= 0 else { return nil }
            let registration = Registration(path: directory + "/" + name, queue: queue, handler: handler)
            let watchesFile = !name.isEmpty
            let source = DispatchSource.makeFileSystemObjectSource(
                fileDescriptor: fd, eventMask: [.write, .delete, .rename, .revoke], queue: queue)
            source.setEventHandler { [weak registration, unowned source] in
                let gone = !source.data.intersection(DirectoryEvents.gone).isEmpty
                if gone {
                    // Cancelled before the handler runs: the watcher drops the registration when told.
                    registration?.cancel()
                    source.cancel()
                } else if watchesFile {
                    registration?.watchFile()
                }
                handler(gone ? .directoryGone : .changed)
            }
            source.setCancelHandler { close(fd) }
            registration.directory = source
            source.resume()
            if watchesFile { registration.watchFile() }
            return registration
        }
    }
#endif
