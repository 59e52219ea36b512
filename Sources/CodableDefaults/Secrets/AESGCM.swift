#if canImport(CryptoKit)
    import CryptoKit
    import Foundation
    import Security
#elseif canImport(Glibc)
    import Glibc
#endif

/// AES-256-GCM, SHA-256 and random bytes from the platform, never written here: CryptoKit on Apple platforms, and
/// on Linux OpenSSL's libcrypto, found in the process or loaded (`libcrypto.so.3`, then `libcrypto.so.1.1`) at run
/// time, as the etcd client loads libcurl, so that the package needs no headers and no package of it.
///
/// A sealed value is `nonce ‖ ciphertext ‖ tag`: a fresh random 96-bit nonce per seal, the ciphertext as long as
/// the plaintext, a 128-bit tag. Thread-safe: every call has its own cipher context.
enum AESGCM {
    /// The key's size in bytes.
    static let keySize = 32
    /// The nonce's size in bytes.
    static let nonceSize = 12
    /// The tag's size in bytes.
    static let tagSize = 16

    /// Why a primitive failed, in words; ``open(_:key:associatedData:)``'s authentication failure is
    /// ``Failure/notAuthentic``.
    enum Failure: Error, Equatable {
        /// The platform has no usable implementation (libcrypto not found, or without a function).
        case unavailable(String)
        /// The sealed bytes are not a value sealed with this key and associated data (tampered, cut short, moved
        /// to another name, or sealed with another key).
        case notAuthentic
        /// The implementation reported an error.
        case failed(String)
    }

    /// Seals `plaintext` under `key` (``keySize`` bytes), binding `associatedData`.
    ///
    /// - Returns: `nonce ‖ ciphertext ‖ tag`.
    /// - Throws: ``Failure/unavailable(_:)`` or ``Failure/failed(_:)``.
    static func seal(_ plaintext: [UInt8], key: [UInt8], associatedData: [UInt8]) throws(Failure) -> [UInt8] {
        precondition(key.count == keySize, "an AES-256 key is 32 bytes")
        #if canImport(CryptoKit)
            do {
                let box = try AES.GCM.seal(
                    plaintext, using: SymmetricKey(data: key), nonce: AES.GCM.Nonce(), authenticating: associatedData)
                guard let combined = box.combined else { throw Failure.failed("CryptoKit gave no combined form") }
                return Array(combined)
            } catch let failure as Failure {
                throw failure
            } catch {
                throw Failure.failed("\(error)")
            }
        #elseif canImport(Glibc)
            let crypto = try LibCrypto.shared.get()
            let nonce = try randomBytes(nonceSize)
            return try crypto.withContext { context throws(Failure) in
                var output = [UInt8](repeating: 0, count: plaintext.count + tagSize)
                try crypto.check(crypto.encryptInit(context, crypto.aes256GCM(), nil, key, nonce), "EVP_EncryptInit_ex")
                var length: Int32 = 0
                if !associatedData.isEmpty {
                    try crypto.check(
                        crypto.encryptUpdate(context, nil, &length, associatedData, Int32(associatedData.count)),
                        "EVP_EncryptUpdate")
                }
                var written = 0
                if !plaintext.isEmpty {
                    try output.withUnsafeMutableBufferPointer { out throws(Failure) in
                        try crypto.check(
                            crypto.encryptUpdate(context, out.baseAddress, &length, plaintext, Int32(plaintext.count)),
                            "EVP_EncryptUpdate")
                        written = Int(length)
                        try crypto.check(
                            crypto.encryptFinal(context, out.baseAddress! + written, &length), "EVP_EncryptFinal_ex")
                        written += Int(length)
                    }
                }
                guard written == plaintext.count else {
                    throw Failure.failed("libcrypto wrote \(written) bytes of ciphertext for \(plaintext.count)")
                }
                var tag = [UInt8](repeating: 0, count: tagSize)
                try crypto.check(
                    crypto.control(context, LibCrypto.getTag, Int32(tagSize), &tag), "EVP_CTRL_GCM_GET_TAG")
                return nonce + output[..<written] + tag
            }
        #else
            throw Failure.unavailable(Self.elsewhere)
        #endif
    }

    /// Opens `sealed` (`nonce ‖ ciphertext ‖ tag`) under `key`, checking `associatedData`.
    ///
    /// - Returns: The plaintext.
    /// - Throws: ``Failure/notAuthentic`` when the bytes are not a value sealed with this key and associated data
    ///   (or are too short to be one); ``Failure/unavailable(_:)`` or ``Failure/failed(_:)``.
    static func open(_ sealed: [UInt8], key: [UInt8], associatedData: [UInt8]) throws(Failure) -> [UInt8] {
        precondition(key.count == keySize, "an AES-256 key is 32 bytes")
        guard sealed.count >= nonceSize + tagSize else { throw Failure.notAuthentic }
        #if canImport(CryptoKit)
            let box: AES.GCM.SealedBox
            do {
                box = try AES.GCM.SealedBox(combined: sealed)
            } catch {
                throw Failure.notAuthentic
            }
            do {
                return Array(try AES.GCM.open(box, using: SymmetricKey(data: key), authenticating: associatedData))
            } catch CryptoKitError.authenticationFailure {
                throw Failure.notAuthentic
            } catch {
                throw Failure.failed("\(error)")
            }
        #elseif canImport(Glibc)
            let crypto = try LibCrypto.shared.get()
            let nonce = Array(sealed[..<nonceSize])
            let ciphertext = Array(sealed[nonceSize..<(sealed.count - tagSize)])
            var tag = Array(sealed[(sealed.count - tagSize)...])
            return try crypto.withContext { context throws(Failure) in
                try crypto.check(crypto.decryptInit(context, crypto.aes256GCM(), nil, key, nonce), "EVP_DecryptInit_ex")
                var length: Int32 = 0
                if !associatedData.isEmpty {
                    try crypto.check(
                        crypto.decryptUpdate(context, nil, &length, associatedData, Int32(associatedData.count)),
                        "EVP_DecryptUpdate")
                }
                var output = [UInt8](repeating: 0, count: ciphertext.count + tagSize)
                var written = 0
                try output.withUnsafeMutableBufferPointer { out throws(Failure) in
                    if !ciphertext.isEmpty {
                        try crypto.check(
                            crypto.decryptUpdate(
                                context, out.baseAddress, &length, ciphertext, Int32(ciphertext.count)),
                            "EVP_DecryptUpdate")
                        written = Int(length)
                    }
                    try crypto.check(
                        crypto.control(context, LibCrypto.setTag, Int32(tagSize), &tag), "EVP_CTRL_GCM_SET_TAG")
                    // The tag is checked here: a value that is not authentic fails, and nothing of it is returned.
                    guard crypto.decryptFinal(context, out.baseAddress! + written, &length) > 0 else {
                        throw Failure.notAuthentic
                    }
                    written += Int(length)
                }
                return Array(output[..<written])
            }
        #else
            throw Failure.unavailable(Self.elsewhere)
        #endif
    }

    /// `count` bytes from the platform's cryptographically secure generator.
    ///
    /// - Throws: ``Failure/unavailable(_:)`` or ``Failure/failed(_:)``.
    static func randomBytes(_ count: Int) throws(Failure) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        #if canImport(CryptoKit)
            let status = SecRandomCopyBytes(kSecRandomDefault, count, &bytes)
            guard status == errSecSuccess else { throw Failure.failed("SecRandomCopyBytes: \(status)") }
        #elseif canImport(Glibc)
            let crypto = try LibCrypto.shared.get()
            try crypto.check(crypto.randomBytes(&bytes, Int32(count)), "RAND_bytes")
        #else
            throw Failure.unavailable(Self.elsewhere)
        #endif
        return bytes
    }

    /// The SHA-256 digest of `bytes`.
    ///
    /// - Throws: ``Failure/unavailable(_:)``.
    static func sha256(_ bytes: [UInt8]) throws(Failure) -> [UInt8] {
        #if canImport(CryptoKit)
            return Array(SHA256.hash(data: bytes))
        #elseif canImport(Glibc)
            let crypto = try LibCrypto.shared.get()
            var digest = [UInt8](repeating: 0, count: 32)
            guard crypto.sha256(bytes, bytes.count, &digest) != nil else { throw Failure.failed("SHA256 failed") }
            return digest
        #else
            throw Failure.unavailable(Self.elsewhere)
        #endif
    }

    #if !canImport(CryptoKit) && !canImport(Glibc)
        /// Why there is no implementation here: no CryptoKit, and no `dlopen` to find libcrypto with (musl, the static
        /// Linux SDK).
        private static let elsewhere =
            "encrypted values need CryptoKit or OpenSSL's libcrypto, loaded at run time, "
            + "which a statically linked program cannot do"
    #endif
}

#if !canImport(CryptoKit) && canImport(Glibc)
    /// The functions of OpenSSL's libcrypto that ``AESGCM`` calls, found once (`dlsym`).
    struct LibCrypto: Sendable {
        typealias Context = OpaquePointer
        typealias CipherInit =
            @convention(c) (
                Context?, OpaquePointer?, OpaquePointer?, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?
            ) -> Int32
        typealias CipherUpdate =
            @convention(c) (
                Context?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int32>?, UnsafePointer<UInt8>?, Int32
            ) -> Int32
        typealias CipherFinal =
            @convention(c) (Context?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int32>?) -> Int32

        /// `EVP_CTRL_AEAD_GET_TAG` (`EVP_CTRL_GCM_GET_TAG`) and `EVP_CTRL_AEAD_SET_TAG` of `openssl/evp.h`.
        static let getTag: Int32 = 0x10
        static let setTag: Int32 = 0x11

        let newContext: @convention(c) () -> Context?
        let freeContext: @convention(c) (Context?) -> Void
        let aes256GCM: @convention(c) () -> OpaquePointer?
        let encryptInit: CipherInit
        let encryptUpdate: CipherUpdate
        let encryptFinal: CipherFinal
        let decryptInit: CipherInit
        let decryptUpdate: CipherUpdate
        let decryptFinal: CipherFinal
        let control: @convention(c) (Context?, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
        let randomBytes: @convention(c) (UnsafeMutablePointer<UInt8>?, Int32) -> Int32
        let sha256:
            @convention(c) (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>?) -> UnsafeMutablePointer<UInt8>?

        /// Runs `body` with a new cipher context, freed after.
        func withContext<Result>(_ body: (Context) throws(AESGCM.Failure) -> Result) throws(AESGCM.Failure) -> Result {
            guard let context = newContext() else { throw AESGCM.Failure.failed("EVP_CIPHER_CTX_new failed") }
            defer { freeContext(context) }
            return try body(context)
        }

        /// Throws naming `function` unless `result` is libcrypto's success (1).
        func check(_ result: Int32, _ function: String) throws(AESGCM.Failure) {
            guard result == 1 else { throw AESGCM.Failure.failed("\(function) failed") }
        }

        /// libcrypto's functions: in the process when it is loaded already, else from `libcrypto.so.3` or
        /// `libcrypto.so.1.1`.
        static let shared: Result<LibCrypto, AESGCM.Failure> = {
            var handle = dlopen(nil, RTLD_NOW)
            if handle == nil || dlsym(handle, "EVP_aes_256_gcm") == nil {
                handle = dlopen("libcrypto.so.3", RTLD_NOW) ?? dlopen("libcrypto.so.1.1", RTLD_NOW)
            }
            guard let handle else {
                let said = dlerror().map { String(cString: $0) } ?? "not found"
                return .failure(
                    .unavailable("encrypted values need OpenSSL's libcrypto, which this process cannot load (\(said))"))
            }
            func function<Function>(_ name: String, as _: Function.Type) throws(AESGCM.Failure) -> Function {
                guard let address = dlsym(handle, name) else {
                    throw AESGCM.Failure.unavailable("encrypted values need OpenSSL's libcrypto, and it has no \(name)")
                }
                return unsafeBitCast(address, to: Function.self)
            }
            do throws(AESGCM.Failure) {
                return .success(
                    LibCrypto(
                        newContext: try function("EVP_CIPHER_CTX_new", as: (@convention(c) () -> Context?).self),
                        freeContext: try function("EVP_CIPHER_CTX_free", as: (@convention(c) (Context?) -> Void).self),
                        aes256GCM: try function("EVP_aes_256_gcm", as: (@convention(c) () -> OpaquePointer?).self),
                        encryptInit: try function("EVP_EncryptInit_ex", as: CipherInit.self),
                        encryptUpdate: try function("EVP_EncryptUpdate", as: CipherUpdate.self),
                        encryptFinal: try function("EVP_EncryptFinal_ex", as: CipherFinal.self),
                        decryptInit: try function("EVP_DecryptInit_ex", as: CipherInit.self),
                        decryptUpdate: try function("EVP_DecryptUpdate", as: CipherUpdate.self),
                        decryptFinal: try function("EVP_DecryptFinal_ex", as: CipherFinal.self),
                        control: try function(
                            "EVP_CIPHER_CTX_ctrl",
                            as: (@convention(c) (Context?, Int32, Int32, UnsafeMutableRawPointer?) -> Int32).self),
                        randomBytes: try function(
                            "RAND_bytes", as: (@convention(c) (UnsafeMutablePointer<UInt8>?, Int32) -> Int32).self),
                        sha256: try function(
                            "SHA256",
                            as: (@convention(c) (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<UInt8>?) ->
                                UnsafeMutablePointer<UInt8>?).self)))
            } catch {
                return .failure(error)
            }
        }()
    }
#endif
