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
            let previous = state.layers
            if let readOverrides { state.layers.overrides = readOverrides }
            if let readFallbacks { state.layers.fallbacks = readFallbacks }
            state.layers.generation &+= 1
            state.layerErrors = [:]
            stopped = state.layerWatchers
            state.layerWatchers = makeLayerWatchers(for: state.layers)
            started = state.layerWatchers
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
            guard state.layers.generation == generation else { return nil }
            let all = state.layers.overrides + state.layers.fallbacks
            return position < all.count ? all[position] : nil
        }
        guard let current else { return }
        let again: LoadedLayer?
        do throws(DefaultsError) {
            again = try current.reread(options: options)
        } catch {
            let isNew = state.withLock { state in
                defer { state.layerErrors[position] = error }
                return state.layerErrors[position] != error
            }
            if isNew { report(error) }
            return
        }
        guard let again else { return }
        let changed: Set<MemberName> = state.withLock { state in
            guard state.layers.generation == generation else { return [] }
            state.layerErrors[position] = nil
            let previous = state.layers
            let overrides = state.layers.overrides.count
            if position < overrides {
                state.layers.overrides[position] = again
            } else {
                state.layers.fallbacks[position - overrides] = again
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
    /// - Throws: ``DefaultsError`` when a pending value does not encode, or a value cannot be represented as a
    ///   `JSONValue` (an object with two canonically equivalent names).
    func layeredValues(of name: String) throws(DefaultsError) -> [(Defaults.Source, [UInt8], Bool)] {
        let (argument, overrides, stored, fallbacks, registered) = state.withLock { state in
            let cell = state.cell(named: name)
            return (
                cell.argument, state.layers.overrides.compactMap { $0.value(named: name) }, cell.stored,
                state.layers.fallbacks.compactMap { $0.value(named: name) }, cell.registered
            )
        }
        var values: [(Defaults.Source, [UInt8], Bool)] = []
        if let argument { values.append((.argument, argument, false)) }
        for layer in overrides { values.append((layer.source, layer.bytes, layer.isSecret)) }
        switch stored {
        case .absent: break
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
