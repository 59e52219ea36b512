import Foundation

// Each request type writes its JSON and each answer type reads its own, by hand (`WireJSON.swift`), with the
// field names the gateway uses (snake case). Fields at their protobuf default may be left out (the gateway does),
// `null` reads as absent, and fields not known here are skipped; a required field that is absent is an error, as
// is an int64 that is not a string of digits or bytes that are not base64.

/// A request body that writes its own JSON.
protocol WireEncodable {
    /// Writes the request as one JSON object.
    func write(to writer: inout WireJSONWriter)
}

/// An answer that reads itself from the gateway's JSON.
protocol WireDecodable {
    /// Reads the answer: one JSON object.
    init(reading reader: inout WireJSONReader) throws(WireJSONError)
}

extension WireJSONReader {
    /// Reads a value of `type` that is optional on the wire: `nil` for `null`.
    mutating func readOptional<Value>(
        _ read: (inout WireJSONReader) throws(WireJSONError) -> Value
    ) throws(WireJSONError) -> Value? {
        if try readNull() { return nil }
        return try read(&self)
    }
}

/// The error of a required field that the answer leaves out.
private func missing(_ field: String, in object: String) -> WireJSONError {
    WireJSONError(description: "no \"\(field)\" in \(object)")
}

// MARK: - Requests

extension Wire.RangeRequest: WireEncodable {
    func write(to writer: inout WireJSONWriter) {
        writer.object { writer in
            writer.field("key", base64: key.bytes)
            if let rangeEnd { writer.field("range_end", base64: rangeEnd.bytes) }
            if let limit { writer.field("limit", int64: limit.value) }
            if let revision { writer.field("revision", int64: revision.value) }
            if let keysOnly { writer.field("keys_only", bool: keysOnly) }
        }
    }
}

extension Wire.PutRequest: WireEncodable {
    func write(to writer: inout WireJSONWriter) {
        writer.object { writer in
            writer.field("key", base64: key.bytes)
            writer.field("value", base64: value.bytes)
        }
    }
}

extension Wire.DeleteRangeRequest: WireEncodable {
    func write(to writer: inout WireJSONWriter) {
        writer.object { writer in
            writer.field("key", base64: key.bytes)
            if let rangeEnd { writer.field("range_end", base64: rangeEnd.bytes) }
        }
    }
}

extension Wire.Compare: WireEncodable {
    func write(to writer: inout WireJSONWriter) {
        writer.object { writer in
            writer.field("key", base64: key.bytes)
            writer.field("target", string: target)
            writer.field("result", string: result)
            writer.field("mod_revision", int64: modRevision.value)
        }
    }
}

extension Wire.RequestOp: WireEncodable {
    func write(to writer: inout WireJSONWriter) {
        writer.object { writer in
            if let requestRange { writer.field("request_range", requestRange) }
            if let requestPut { writer.field("request_put", requestPut) }
            if let requestDeleteRange { writer.field("request_delete_range", requestDeleteRange) }
        }
    }
}

extension Wire.TxnRequest: WireEncodable {
    func write(to writer: inout WireJSONWriter) {
        writer.object { writer in
            writer.field("compare", array: compare) { writer, compare in compare.write(to: &writer) }
            writer.field("success", array: success) { writer, operation in operation.write(to: &writer) }
        }
    }
}

extension Wire.AuthenticateRequest: WireEncodable {
    func write(to writer: inout WireJSONWriter) {
        writer.object { writer in
            writer.field("name", string: name)
            writer.field("password", string: password)
        }
    }
}

extension Wire.WatchCreateRequest: WireEncodable {
    func write(to writer: inout WireJSONWriter) {
        writer.object { writer in
            writer.field("key", base64: key.bytes)
            if let rangeEnd { writer.field("range_end", base64: rangeEnd.bytes) }
            writer.field("start_revision", int64: startRevision.value)
            writer.field("progress_notify", bool: progressNotify)
        }
    }
}

extension Wire.WatchRequest: WireEncodable {
    func write(to writer: inout WireJSONWriter) {
        writer.object { writer in
            writer.field("create_request", createRequest)
        }
    }
}

// MARK: - Answers

extension Wire.Header: WireDecodable {
    init(reading reader: inout WireJSONReader) throws(WireJSONError) {
        var revision: Int64?
        try reader.readObject { (reader, name) throws(WireJSONError) in
            if wireName(name, "revision") {
                revision = try reader.readOptional { (reader) throws(WireJSONError) in try reader.readRevision() }
            } else {
                try reader.skipValue()
            }
        }
        guard let revision else { throw missing("revision", in: "the header") }
        self.init(revision: WireInt64(revision))
    }
}

extension Wire.KeyValue: WireDecodable {
    init(reading reader: inout WireJSONReader) throws(WireJSONError) {
        self.init()
        try reader.readObject { (reader, name) throws(WireJSONError) in
            if wireName(name, "key") {
                key = try reader.readOptional { (reader) throws(WireJSONError) in WireBytes(try reader.readBase64()) }
            } else if wireName(name, "value") {
                value = try reader.readOptional { (reader) throws(WireJSONError) in WireBytes(try reader.readBase64()) }
            } else if wireName(name, "mod_revision", "modRevision") {
                modRevision = try reader.readOptional { (reader) throws(WireJSONError) in
                    WireInt64(try reader.readRevision())
                }
            } else if wireName(name, "create_revision", "createRevision") {
                createRevision = try reader.readOptional { (reader) throws(WireJSONError) in
                    WireInt64(try reader.readRevision())
                }
            } else if wireName(name, "version") {
                version = try reader.readOptional { (reader) throws(WireJSONError) in WireInt64(try reader.readInt64())
                }
            } else {
                try reader.skipValue()
            }
        }
    }
}

extension WireJSONReader {
    /// Reads an array of key-values (`null`: none).
    fileprivate mutating func readKeyValues() throws(WireJSONError) -> [Wire.KeyValue]? {
        try readOptional { (reader) throws(WireJSONError) in
            var keyValues: [Wire.KeyValue] = []
            try reader.readArray { (reader) throws(WireJSONError) in
                keyValues.append(try Wire.KeyValue(reading: &reader))
            }
            return keyValues
        }
    }

    /// Reads the header of an answer (`null`: none).
    fileprivate mutating func readHeader() throws(WireJSONError) -> Wire.Header? {
        try readOptional { (reader) throws(WireJSONError) in try Wire.Header(reading: &reader) }
    }

    /// Reads a revision: an int64 from 0 (a key that has none) up to one below the largest, so that the revision
    /// after it is one too. Anything else is an answer etcd never gives, refused as the other malformed answers
    /// are, never taken for a revision that arithmetic on it would overflow.
    fileprivate mutating func readRevision() throws(WireJSONError) -> Int64 {
        let start = offset
        let value = try readInt64()
        guard value >= 0, value < Int64.max else {
            throw .syntax("\(value) is not a revision etcd gives (0 up to 2^63 - 2)", at: start)
        }
        return value
    }

    /// Reads an int64 that may be `null`.
    fileprivate mutating func readOptionalInt64() throws(WireJSONError) -> WireInt64? {
        try readOptional { (reader) throws(WireJSONError) in WireInt64(try reader.readInt64()) }
    }

    /// Reads a boolean that may be `null`.
    fileprivate mutating func readOptionalBool() throws(WireJSONError) -> Bool? {
        try readOptional { (reader) throws(WireJSONError) in try reader.readBool() }
    }

    /// Reads a string that may be `null`.
    fileprivate mutating func readOptionalString() throws(WireJSONError) -> String? {
        try readOptional { (reader) throws(WireJSONError) in try reader.readString() }
    }
}

extension Wire.RangeResponse: WireDecodable {
    init(reading reader: inout WireJSONReader) throws(WireJSONError) {
        var header: Wire.Header?
        var kvs: [Wire.KeyValue]?
        var more: Bool?
        try reader.readObject { (reader, name) throws(WireJSONError) in
            if wireName(name, "header") {
                header = try reader.readHeader()
            } else if wireName(name, "kvs") {
                kvs = try reader.readKeyValues()
            } else if wireName(name, "more") {
                more = try reader.readOptionalBool()
            } else {
                try reader.skipValue()
            }
        }
        guard let header else { throw missing("header", in: "the answer") }
        self.init(header: header, kvs: kvs, more: more)
    }
}

extension Wire.DeleteRangeResponse: WireDecodable {
    init(reading reader: inout WireJSONReader) throws(WireJSONError) {
        var header: Wire.Header?
        var deleted: WireInt64?
        try reader.readObject { (reader, name) throws(WireJSONError) in
            if wireName(name, "header") {
                header = try reader.readHeader()
            } else if wireName(name, "deleted") {
                deleted = try reader.readOptionalInt64()
            } else {
                try reader.skipValue()
            }
        }
        guard let header else { throw missing("header", in: "the answer") }
        self.init(header: header, deleted: deleted)
    }
}

extension Wire.HeaderResponse: WireDecodable {
    init(reading reader: inout WireJSONReader) throws(WireJSONError) {
        var header: Wire.Header?
        try reader.readObject { (reader, name) throws(WireJSONError) in
            if wireName(name, "header") { header = try reader.readHeader() } else { try reader.skipValue() }
        }
        guard let header else { throw missing("header", in: "the answer") }
        self.init(header: header)
    }
}

extension Wire.TxnResponse: WireDecodable {
    init(reading reader: inout WireJSONReader) throws(WireJSONError) {
        var header: Wire.Header?
        var succeeded: Bool?
        var responses: [Wire.ResponseOp]?
        try reader.readObject { (reader, name) throws(WireJSONError) in
            if wireName(name, "header") {
                header = try reader.readHeader()
            } else if wireName(name, "succeeded") {
                succeeded = try reader.readOptionalBool()
            } else if wireName(name, "responses") {
                responses = try reader.readOptional { (reader) throws(WireJSONError) in
                    var operations: [Wire.ResponseOp] = []
                    try reader.readArray { (reader) throws(WireJSONError) in
                        operations.append(try Wire.ResponseOp(reading: &reader))
                    }
                    return operations
                }
            } else {
                try reader.skipValue()
            }
        }
        guard let header else { throw missing("header", in: "the answer") }
        self.init(header: header, succeeded: succeeded, responses: responses)
    }
}

extension Wire.ResponseOp: WireDecodable {
    init(reading reader: inout WireJSONReader) throws(WireJSONError) {
        var responseRange: Wire.TxnRangeResponse?
        try reader.readObject { (reader, name) throws(WireJSONError) in
            if wireName(name, "response_range", "responseRange") {
                responseRange = try reader.readOptional { (reader) throws(WireJSONError) in
                    var kvs: [Wire.KeyValue]?
                    try reader.readObject { (reader, name) throws(WireJSONError) in
                        if wireName(name, "kvs") { kvs = try reader.readKeyValues() } else { try reader.skipValue() }
                    }
                    return Wire.TxnRangeResponse(kvs: kvs)
                }
            } else {
                try reader.skipValue()
            }
        }
        self.init(responseRange: responseRange)
    }
}

extension Wire.AuthenticateResponse: WireDecodable {
    init(reading reader: inout WireJSONReader) throws(WireJSONError) {
        var token: String?
        try reader.readObject { (reader, name) throws(WireJSONError) in
            if wireName(name, "token") { token = try reader.readOptionalString() } else { try reader.skipValue() }
        }
        self.init(token: token)
    }
}

extension Wire.ErrorBody: WireDecodable {
    init(reading reader: inout WireJSONReader) throws(WireJSONError) {
        self.init()
        try reader.readObject { (reader, name) throws(WireJSONError) in
            if wireName(name, "error") {
                error = try reader.readOptionalString()
            } else if wireName(name, "message") {
                message = try reader.readOptionalString()
            } else if wireName(name, "code") {
                code = try reader.readOptional { (reader) throws(WireJSONError) in try reader.readInt() }
            } else {
                try reader.skipValue()
            }
        }
    }
}

extension Wire.Event: WireDecodable {
    init(reading reader: inout WireJSONReader) throws(WireJSONError) {
        self.init()
        try reader.readObject { (reader, name) throws(WireJSONError) in
            if wireName(name, "type") {
                type = try reader.readOptionalString()
            } else if wireName(name, "kv") {
                kv = try reader.readOptional { (reader) throws(WireJSONError) in try Wire.KeyValue(reading: &reader) }
            } else {
                try reader.skipValue()
            }
        }
    }
}

extension Wire.WatchResult: WireDecodable {
    init(reading reader: inout WireJSONReader) throws(WireJSONError) {
        self.init()
        try reader.readObject { (reader, name) throws(WireJSONError) in
            if wireName(name, "header") {
                header = try reader.readOptional { (reader) throws(WireJSONError) in
                    var revision: WireInt64?
                    try reader.readObject { (reader, name) throws(WireJSONError) in
                        if wireName(name, "revision") {
                            revision = try reader.readOptional { (reader) throws(WireJSONError) in
                                WireInt64(try reader.readRevision())
                            }
                        } else {
                            try reader.skipValue()
                        }
                    }
                    return Wire.WatchHeader(revision: revision)
                }
            } else if wireName(name, "created") {
                created = try reader.readOptionalBool()
            } else if wireName(name, "canceled") {
                canceled = try reader.readOptionalBool()
            } else if wireName(name, "compact_revision", "compactRevision") {
                compactRevision = try reader.readOptional { (reader) throws(WireJSONError) in
                    WireInt64(try reader.readRevision())
                }
            } else if wireName(name, "cancel_reason", "cancelReason") {
                cancelReason = try reader.readOptionalString()
            } else if wireName(name, "events") {
                events = try reader.readOptional { (reader) throws(WireJSONError) in
                    var events: [Wire.Event] = []
                    try reader.readArray { (reader) throws(WireJSONError) in
                        events.append(try Wire.Event(reading: &reader))
                    }
                    return events
                }
            } else {
                try reader.skipValue()
            }
        }
    }
}

extension Wire.WatchMessage: WireDecodable {
    init(reading reader: inout WireJSONReader) throws(WireJSONError) {
        self.init()
        try reader.readObject { (reader, name) throws(WireJSONError) in
            if wireName(name, "result") {
                result = try reader.readOptional { (reader) throws(WireJSONError) in
                    try Wire.WatchResult(reading: &reader)
                }
            } else if wireName(name, "error") {
                error = try reader.readOptional { (reader) throws(WireJSONError) in try Wire.ErrorBody(reading: &reader)
                }
            } else {
                try reader.skipValue()
            }
        }
    }
}
