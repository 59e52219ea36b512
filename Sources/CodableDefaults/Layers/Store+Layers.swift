extension Store {
    /// Replaces the overrides and fallbacks that are given (`nil` keeps the current ones), reading them first:
    /// nothing changes when one fails to read. Starts watching their files and directories, and tells observers
    /// of the names whose layer values changed.
    ///
    /// - Throws: ``DefaultsError`` when a layer exists but cannot be read or parsed.
    func setLayers(overrides: [Defaults.Layer]?, fallbacks: [Defaults.Layer]?) throws(DefaultsError) {
        let readOverrides = try overrides.map { (layers) throws(DefaultsError) in try read(layers) }
        let readFallbacks = try fallbacks.map { (layers) throws(DefaultsError) in try read(layers) }
        var stopped: [FileWatcher] = []
        var started: [FileWatcher] = []
        let changed: Set<MemberName> = state.withLock { state in
            let previous = state.layers.stack
            if let readOverrides { state.layers.stack.overrides = readOverrides }
            if let readFallbacks { state.layers.stack.fallbacks = readFallbacks }
            state.layers.stack.generation &+= 1
            state.layers.errors = [:]
            stopped = state.layers.watchers
            state.layers.watchers = makeLayerWatchers(for: state.layers.stack)
            started = state.layers.watchers
            return state.refreshLayerValues(previous: previous)
        }
        for watcher in stopped { watcher.stop() }
        for watcher in started { watcher.start() }
        publish(changed)
    }

    /// Reads each layer with the store's limits.
    private func read(_ layers: [Defaults.Layer]) throws(DefaultsError) -> [LoadedLayer] {
        var loaded: [LoadedLayer] = []
        for layer in layers { loaded.append(try LoadedLayer(layer, options: options)) }
        return loaded
    }

    /// A stopped watcher for each layer that has a file or directory, calling ``rereadLayer(_:generation:)`` on
    /// the store's queue.
    private func makeLayerWatchers(for stack: LayerStack) -> [FileWatcher] {
        let generation = stack.generation
        var watchers: [FileWatcher] = []
        for (position, layer) in (stack.overrides + stack.fallbacks).enumerated() {
            for (directory, name) in layer.watched {
                watchers.append(
                    FileWatcher(directory: directory, name: name, queue: queue) { [weak self] in
                        self?.rereadLayer(position, generation: generation)
                    })
            }
        }
        return watchers
    }

    /// Reads the layer at `position` (overrides first, then fallbacks) again after its watcher signalled, and
    /// tells observers of the names whose values changed. Does nothing when the layers were replaced since
    /// (`generation`). A layer that no longer reads correctly keeps its last good values; the error goes to the
    /// error handler, once per distinct error.
    func rereadLayer(_ position: Int, generation: Int) {
        let current: LoadedLayer? = state.withLock { state in
            guard state.layers.stack.generation == generation else { return nil }
            let all = state.layers.stack.overrides + state.layers.stack.fallbacks
            return position < all.count ? all[position] : nil
        }
        guard let current else { return }
        let again: LoadedLayer?
        do throws(DefaultsError) {
            again = try current.reread(options: options)
        } catch {
            let isNew = state.withLock { state in
                defer { state.layers.errors[position] = error }
                return state.layers.errors[position] != error
            }
            if isNew { report(error) }
            return
        }
        guard let again else { return }
        let changed: Set<MemberName> = state.withLock { state in
            guard state.layers.stack.generation == generation else { return [] }
            state.layers.errors[position] = nil
            let previous = state.layers.stack
            let overrides = state.layers.stack.overrides.count
            if position < overrides {
                state.layers.stack.overrides[position] = again
            } else {
                state.layers.stack.fallbacks[position - overrides] = again
            }
            return state.refreshLayerValues(previous: previous)
        }
        publish(changed)
    }

    /// Which domain or layer supplies the effective value of `name`.
    func source(of name: String) -> Defaults.Source {
        trackRead(of: name)
        let origin = state.withLock { $0.cell(named: name).origin }
        switch origin {
        case .argument: return .argument
        case .layer(let value): return value.source
        case .stored: return .stored(path: path)
        case .registered: return .registered
        case .none: return .default
        }
    }

    /// Every value of `name` in lookup order, each with its source and whether it is secret (see
    /// ``Defaults/layeredValues(forKey:)``). Encodes a pending stored value (user code) outside the lock.
    ///
    /// - Throws: ``DefaultsError`` when a pending value does not encode, an encrypted stored value does not open
    ///   with the store's key (``SecretCipher/open(_:name:path:)``), or a value cannot be represented as a
    ///   `JSONValue` (an object with two canonically equivalent names).
    func layeredValues(of name: String) throws(DefaultsError) -> [(Defaults.Source, [UInt8], Bool)] {
        let (argument, overrides, stored, fallbacks, registered) = state.withLock { state in
            let cell = state.cell(named: name)
            return (
                cell.argument, state.layers.stack.overrides.compactMap { $0.value(named: name) }, cell.stored,
                state.layers.stack.fallbacks.compactMap { $0.value(named: name) }, cell.registered
            )
        }
        var values: [(Defaults.Source, [UInt8], Bool)] = []
        if let argument { values.append((.argument, argument, false)) }
        for layer in overrides { values.append((layer.source, layer.bytes, layer.isSecret)) }
        switch stored {
        case .absent: break
        case .raw(let bytes) where SecretCipher.isEnvelope(bytes):
            // Opened with the store's key; without it, the encrypted text (secret either way).
            let cipher = self.cipher
            let opened = cipher.key == nil ? bytes : try cipher.open(bytes, name: name, path: path)
            values.append((.stored(path: path), opened, true))
        case .raw(let bytes): values.append((.stored(path: path), bytes, false))
        case .pending(let box):
            let bytes = try Codec.encode(box.value, key: name, encoder: Codec.makeEncoder(), maxDepth: maxDepth)
            values.append((.stored(path: path), bytes, false))
        }
        for layer in fallbacks { values.append((layer.source, layer.bytes, layer.isSecret)) }
        if let registered { values.append((.registered, registered, false)) }
        return values
    }
}
