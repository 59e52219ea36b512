import Foundation

// The JSON of etcd 3.4's gateway (grpc-gateway over the v3 gRPC API), as it is on the wire. Property names are
// the camel-case forms of the protobuf field names, which are snake case on the wire; the request and answer types
// write and read their JSON by hand (`Wire+JSON.swift`; their `Codable` conformance is what they mean).
// Quirks it has, all met against a real etcd 3.4.23:
// - keys and values are base64 (standard alphabet, padded);
// - int64 fields (revisions, counts) are JSON strings ("revision": "12");
// - fields at their protobuf default are left out: an empty value has no "value", a failed transaction has no
//   "succeeded", a PUT event has no "type" (only DELETE is spelled), an empty range has no "kvs" nor "count";
// - an error is {"error": ..., "message": ..., "code": gRPC code} with an HTTP status mapped from the code;
// - a watch answers one JSON object per line, each {"result": {...}} (or {"error": {...}}); a compacted start
//   revision gives first "created": true, then "canceled": true with "compact_revision"; a refused token gives
//   "created" and "canceled" together with "cancel_reason" and watch_id "-1".

/// An int64 of the gateway: a JSON string of digits.
struct WireInt64: Codable, Sendable {
    var value: Int64

    init(_ value: Int64) { self.value = value }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let number = Int64(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\"\(text)\" is not an int64")
        }
        value = number
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(String(value))
    }
}

/// Bytes as the gateway spells them: base64 text.
struct WireBytes: Codable, Sendable {
    var bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let data = Data(base64Encoded: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\"\(text)\" is not base64")
        }
        bytes = Array(data)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Data(bytes).base64EncodedString())
    }
}

enum Wire {
    /// The header of every answer. Required, with its revision: an answer without it (a server that is not
    /// etcd, or a proxy's empty `{}`) is not taken as etcd's acknowledgement.
    struct Header: Decodable {
        var revision: WireInt64
    }

    struct KeyValue: Decodable {
        var key: WireBytes?
        var value: WireBytes?
        var createRevision: WireInt64?
        var modRevision: WireInt64?
        var version: WireInt64?
    }

    struct RangeRequest: Encodable {
        var key: WireBytes
        var rangeEnd: WireBytes?
        var limit: WireInt64?
        /// The revision to read at (`nil`: the newest); etcd refuses one it has compacted away.
        var revision: WireInt64?
        /// Whether to leave the values out (keys and revisions only).
        var keysOnly: Bool?
    }

    struct RangeResponse: Decodable {
        var header: Header
        var kvs: [KeyValue]?
        var more: Bool?
    }

    struct PutRequest: Encodable {
        var key: WireBytes
        var value: WireBytes
    }

    struct DeleteRangeRequest: Encodable {
        var key: WireBytes
        var rangeEnd: WireBytes?
    }

    struct DeleteRangeResponse: Decodable {
        var header: Header
        var deleted: WireInt64?
    }

    struct HeaderResponse: Decodable {
        var header: Header
    }

    struct Compare: Encodable {
        var key: WireBytes
        var target = "MOD"
        var result = "EQUAL"
        var modRevision: WireInt64
    }

    struct RequestOp: Encodable {
        var requestRange: RangeRequest?
        var requestPut: PutRequest?
        var requestDeleteRange: DeleteRangeRequest?
    }

    struct TxnRequest: Encodable {
        var compare: [Compare]
        var success: [RequestOp]
    }

    /// A range's answer within a transaction's (its header is not needed: the transaction's has the revision).
    struct TxnRangeResponse: Decodable {
        var kvs: [KeyValue]?
    }

    struct ResponseOp: Decodable {
        var responseRange: TxnRangeResponse?
    }

    struct TxnResponse: Decodable {
        var header: Header
        var succeeded: Bool?
        var responses: [ResponseOp]?
    }

    struct AuthenticateRequest: Encodable {
        var name: String
        var password: String
    }

    struct AuthenticateResponse: Decodable {
        var token: String?
    }

    struct ErrorBody: Decodable {
        var error: String?
        var message: String?
        var code: Int?
    }

    struct WatchCreateRequest: Encodable {
        var key: WireBytes
        var rangeEnd: WireBytes?
        var startRevision: WireInt64
        var progressNotify = true
    }

    struct WatchRequest: Encodable {
        var createRequest: WatchCreateRequest
    }

    struct Event: Decodable {
        var type: String?
        var kv: KeyValue?
    }

    /// A watch message's header: its revision may be left out (a cancellation's is 0, which etcd's JSON omits).
    struct WatchHeader: Decodable {
        var revision: WireInt64?
    }

    struct WatchResult: Decodable {
        var header: WatchHeader?
        var created: Bool?
        var canceled: Bool?
        var compactRevision: WireInt64?
        var cancelReason: String?
        var events: [Event]?
    }

    struct WatchMessage: Decodable {
        var result: WatchResult?
        var error: ErrorBody?
    }

    /// The JSON of a request body, written by hand (`Wire+JSON.swift`): a type without that writer does not
    /// compile here, so no request ever takes a slower path unseen. (The types are `Encodable` too, for the tests
    /// that check the writer against `JSONEncoder`.)
    static func encode(_ body: some WireEncodable) -> Data {
        var writer = WireJSONWriter()
        body.write(to: &writer)
        return Data(writer.bytes)
    }

    /// The decoder of the gateway's answers.
    static func decoder() -> WireDecoder { WireDecoder() }
}

/// Decodes the gateway's answers, by hand (`Wire+JSON.swift`): a type without that reader does not compile here.
/// (The types are `Decodable` too, for the tests that check the reader against `JSONDecoder`.)
struct WireDecoder {
    /// The answer of `type` that `data` holds.
    ///
    /// - Throws: ``WireJSONError`` saying what is wrong where.
    func decode<Value: WireDecodable>(_ type: Value.Type, from data: Data) throws(WireJSONError) -> Value {
        try WireJSONReader.read(data) { (reader) throws(WireJSONError) in try Value(reading: &reader) }
    }
}
