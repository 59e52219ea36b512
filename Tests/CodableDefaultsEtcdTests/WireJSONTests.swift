import Foundation
import Testing

@testable import CodableDefaultsEtcd

/// The gateway's JSON as the client writes and reads it by hand: the exact bytes of requests, base64 both ways,
/// answers read as `JSONDecoder` with snake-case keys read them, and what is not the gateway's JSON refused with
/// where it is wrong.
@Suite struct WireJSONTests {
    /// The text of a request, as the client sends it.
    private func text(_ body: some WireEncodable) throws -> String {
        String(decoding: Wire.encode(body), as: UTF8.self)
    }

    /// What `JSONEncoder` with snake-case keys (the client's encoder before) writes for `body`, as a property list,
    /// beside what the client writes now: the same JSON value.
    private func expectSameAsJSONEncoder(
        _ body: some Encodable & WireEncodable, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let expected = try JSONSerialization.jsonObject(with: try encoder.encode(body)) as? NSDictionary
        let actual = try JSONSerialization.jsonObject(with: Wire.encode(body)) as? NSDictionary
        let same = expected != nil && actual == expected
        #expect(same, sourceLocation: sourceLocation)
    }

    /// `text` read as `Answer` by hand.
    private func read<Answer: WireDecodable>(_ text: String, as _: Answer.Type) throws -> Answer {
        try Wire.decoder().decode(Answer.self, from: Data(text.utf8))
    }

    /// The error reading `text` as `Answer` throws, in words.
    private func refusal<Answer: WireDecodable>(_ text: String, as _: Answer.Type) -> String? {
        do {
            _ = try Wire.decoder().decode(Answer.self, from: Data(text.utf8))
            return nil
        } catch {
            return "\(error)"
        }
    }

    // MARK: Requests

    @Test func aTransactionIsWrittenByteForByte() throws {
        let request = Wire.TxnRequest(
            compare: [Wire.Compare(key: WireBytes(Array("p/a".utf8)), modRevision: WireInt64(12))],
            success: [
                Wire.RequestOp(requestPut: Wire.PutRequest(key: WireBytes(Array("p/a".utf8)), value: WireBytes([]))),
                Wire.RequestOp(requestDeleteRange: Wire.DeleteRangeRequest(key: WireBytes([0xFF, 0x00, 0x80]))),
                Wire.RequestOp(
                    requestRange: Wire.RangeRequest(key: WireBytes([0x61]), revision: WireInt64(-3), keysOnly: true)),
            ])
        #expect(
            try text(request)
                == #"{"compare":[{"key":"cC9h","target":"MOD","result":"EQUAL","mod_revision":"12"}],"#
                + #""success":[{"request_put":{"key":"cC9h","value":""}},{"request_delete_range":{"key":"/wCA"}},"#
                + #"{"request_range":{"key":"YQ==","revision":"-3","keys_only":true}}]}"#)
        try expectSameAsJSONEncoder(request)
        #expect(try text(Wire.TxnRequest(compare: [], success: [])) == #"{"compare":[],"success":[]}"#)
    }

    @Test func theOtherRequestsAreWrittenByteForByte() throws {
        let range = Wire.RangeRequest(
            key: WireBytes(Array("p/".utf8)), rangeEnd: WireBytes(Array("p0".utf8)), limit: WireInt64(1))
        #expect(try text(range) == #"{"key":"cC8=","range_end":"cDA=","limit":"1"}"#)
        try expectSameAsJSONEncoder(range)
        let put = Wire.PutRequest(key: WireBytes(Array("k".utf8)), value: WireBytes(Array("{\"a\":1}".utf8)))
        #expect(try text(put) == #"{"key":"aw==","value":"eyJhIjoxfQ=="}"#)
        try expectSameAsJSONEncoder(put)
        let watch = Wire.WatchRequest(
            createRequest: Wire.WatchCreateRequest(
                key: WireBytes(Array("p/".utf8)), rangeEnd: WireBytes(Array("p0".utf8)),
                startRevision: WireInt64(Int64.max)))
        #expect(
            try text(watch)
                == #"{"create_request":{"key":"cC8=","range_end":"cDA=","start_revision":"9223372036854775807","#
                + #""progress_notify":true}}"#)
        try expectSameAsJSONEncoder(watch)
    }

    @Test func textIsEscapedAsJSONRequires() throws {
        let request = Wire.AuthenticateRequest(name: "a\"b\\c/d", password: "é😀\n\r\t\u{01}\u{1F}\u{7F}")
        #expect(
            try text(request) == #"{"name":"a\"b\\c/d","password":"é😀\n\r\t\u0001\u001f\#u{7F}"}"#)
        try expectSameAsJSONEncoder(request)
    }

    @Test func bytesOfEveryValueAndALargeValueAreWrittenAsFoundationWritesThem() throws {
        let every = (0...255).map(UInt8.init)
        let large = (0..<1_500_000).map { (index: Int) in UInt8(truncatingIfNeeded: index &* 7919 >> 3) }
        for bytes in [every, large, [0xFF], [0xFF, 0xFE], [0xFF, 0xFE, 0xFD]] {
            var written: [UInt8] = []
            WireBase64.encode(bytes, into: &written)
            #expect(String(decoding: written, as: UTF8.self) == Data(bytes).base64EncodedString())
            try expectSameAsJSONEncoder(Wire.PutRequest(key: WireBytes(bytes), value: WireBytes(bytes)))
        }
    }

    // MARK: Base64

    @Test func base64IsReadAsFoundationReadsIt() {
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ length) }
            let text = Array(Data(bytes).base64EncodedString().utf8)
            #expect(text.withUnsafeBufferPointer { WireBase64.decode($0) } == bytes)
        }
    }

    /// Only padded base64 of the standard alphabet is read (Foundation takes "ab=c" and "====" too; etcd writes
    /// neither).
    @Test(arguments: ["a", "abc", "abcde", "ab=c", "a===", "====", "=abc", "ab!d", "ab d", "ab\nd", "YQ=\u{00}"])
    func textThatIsNotBase64IsRefused(_ text: String) {
        let bytes = Array(text.utf8)
        #expect(bytes.withUnsafeBufferPointer { WireBase64.decode($0) } == nil, "\(text)")
    }

    // MARK: Answers

    /// A range's answer as etcd 3.4 writes it, with a key that is not UTF-8, a key whose empty value is left out,
    /// and fields the client does not read.
    private let rangeAnswer = """
        {"header":{"cluster_id":"14841639068965178418","member_id":"10276657743932975437","revision":"42",\
        "raft_term":"2"},"kvs":[{"key":"/wCA","create_revision":"3","mod_revision":"41","version":"7",\
        "value":"eyJhIjoxfQ=="},{"key":"cC9l","create_revision":"5","mod_revision":"5","version":"1"}],\
        "count":"2","more":false,"extra":[1,-2.5e3,true,null,{"x":[[]]}]}
        """

    @Test func aRangeIsReadAsJSONDecoderReadsIt() throws {
        let answer = try read(rangeAnswer, as: Wire.RangeResponse.self)
        #expect(answer.header.revision.value == 42)
        #expect(answer.more == false)
        let kvs = try #require(answer.kvs)
        #expect(kvs.map { $0.key?.bytes } == [[0xFF, 0x00, 0x80], Array("p/e".utf8)])
        #expect(kvs.map { $0.value?.bytes } == [Array("{\"a\":1}".utf8), nil])
        #expect(kvs.map { $0.modRevision?.value } == [41, 5])
        #expect(kvs.map { $0.createRevision?.value } == [3, 5])
        #expect(kvs.map { $0.version?.value } == [7, 1])

        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let before = try decoder.decode(Wire.RangeResponse.self, from: Data(rangeAnswer.utf8))
        #expect(
            before.kvs?.map { EtcdKeyValue(wire: $0) } == kvs.map { EtcdKeyValue(wire: $0) }
                && before.header.revision.value == 42)
    }

    @Test func anEmptyRangeAndNullsReadAsAbsent() throws {
        let empty = try read(#"{"header":{"revision":"7"}}"#, as: Wire.RangeResponse.self)
        #expect(empty.kvs == nil && empty.header.revision.value == 7)
        let nulls = try read(
            #" { "header" : { "revision" : "8" } , "kvs" : [ { "key" : null , "value" : null } ] , "more" : null } "#,
            as: Wire.RangeResponse.self)
        #expect(nulls.kvs?.count == 1 && nulls.kvs?.first?.key == nil && nulls.more == nil)
    }

    /// A revision etcd never gives (below 0, or the largest int64, whose next would overflow) is a refused answer:
    /// the client and the storage then never compute `revision ± 1` on it.
    @Test(arguments: ["-1", "-9223372036854775808", "9223372036854775807"])
    func aRevisionEtcdNeverGivesIsRefused(_ revision: String) throws {
        let answers: [(String, String)] = [
            ("header", #"{"header":{"revision":"\#(revision)"}}"#),
            ("mod_revision", #"{"header":{"revision":"7"},"kvs":[{"key":"YQ==","mod_revision":"\#(revision)"}]}"#),
            (
                "create_revision",
                #"{"header":{"revision":"7"},"kvs":[{"key":"YQ==","create_revision":"\#(revision)"}]}"#
            ),
        ]
        for (field, answer) in answers {
            let refused = refusal(answer, as: Wire.RangeResponse.self)
            #expect(refused?.contains("not a revision etcd gives") == true, "\(field): \(String(describing: refused))")
        }
        let watch = refusal(
            #"{"result":{"header":{"revision":"7"},"compact_revision":"\#(revision)"}}"#, as: Wire.WatchMessage.self)
        #expect(watch?.contains("not a revision etcd gives") == true, "\(String(describing: watch))")
        #expect(
            try read(#"{"header":{"revision":"9223372036854775806"}}"#, as: Wire.RangeResponse.self)
                .header.revision.value == Int64.max - 1)
    }

    @Test func aLargeValueIsReadWhole() throws {
        let bytes = (0..<1_000_000).map { (index: Int) in UInt8(truncatingIfNeeded: index &* 31) }
        let answer = try read(
            #"{"header":{"revision":"1"},"kvs":[{"key":"aw==","value":"\#(Data(bytes).base64EncodedString())"}]}"#,
            as: Wire.RangeResponse.self)
        #expect(answer.kvs?.first?.value?.bytes == bytes)
    }

    @Test func aTransactionsAnswerIsRead() throws {
        let failed = try read(#"{"header":{"revision":"9"}}"#, as: Wire.TxnResponse.self)
        #expect(failed.succeeded == nil && failed.header.revision.value == 9)
        let reads = try read(
            #"{"header":{"revision":"10"},"succeeded":true,"responses":[{"response_range":{"header":{"revision":"10"},"#
                + #""kvs":[{"key":"aw==","mod_revision":"4"}],"count":"1"}},{"response_range":{"header":{}}},"#
                + #"{"response_put":{"header":{}}}]}"#,
            as: Wire.TxnResponse.self)
        #expect(reads.succeeded == true)
        #expect(reads.responses?.map { $0.responseRange?.kvs?.first?.modRevision?.value } == [4, nil, nil])
        #expect(reads.responses?.map { $0.responseRange == nil } == [false, false, true])
    }

    @Test func theOtherAnswersAreRead() throws {
        #expect(try read(#"{"header":{"revision":"3"}}"#, as: Wire.HeaderResponse.self).header.revision.value == 3)
        let deleted = try read(#"{"header":{"revision":"4"},"deleted":"1"}"#, as: Wire.DeleteRangeResponse.self)
        #expect(deleted.deleted?.value == 1 && deleted.header.revision.value == 4)
        let token = try read(#"{"header":{"revision":"4"},"token":"ab.c\u002Fd"}"#, as: Wire.AuthenticateResponse.self)
        #expect(token.token == "ab.c/d")
        let error = try read(
            #"{"error":"etcdserver: duplicate key given in txn request","code":3,"message":"a \u003cb\u003e \"q\""}"#,
            as: Wire.ErrorBody.self)
        #expect(error.code == 3 && error.message == "a <b> \"q\"")
        #expect(error.error == "etcdserver: duplicate key given in txn request")
    }

    @Test func watchMessagesAreRead() throws {
        let created = try read(
            #"{"result":{"header":{"cluster_id":"1","revision":"5"},"created":true}}"#, as: Wire.WatchMessage.self)
        #expect(created.result?.created == true && created.result?.header?.revision?.value == 5)
        let events = try read(
            #"{"result":{"header":{"revision":"7"},"events":[{"kv":{"key":"cC9h","create_revision":"6","#
                + #""mod_revision":"7","version":"2","value":"MQ=="}},{"type":"DELETE","kv":{"key":"cC9i","#
                + #""mod_revision":"7"}}]}}"#,
            as: Wire.WatchMessage.self)
        let kinds = events.result?.events?.map { EtcdEvent(wire: $0) }
        #expect(
            kinds == [
                EtcdEvent(kind: .put, key: Array("p/a".utf8), value: Array("1".utf8), modRevision: 7),
                EtcdEvent(kind: .delete, key: Array("p/b".utf8), value: [], modRevision: 7),
            ])
        let compacted = try read(
            #"{"result":{"header":{},"canceled":true,"compact_revision":"12","cancel_reason":"mvcc: compacted"}}"#,
            as: Wire.WatchMessage.self)
        #expect(compacted.result?.canceled == true && compacted.result?.compactRevision?.value == 12)
        #expect(compacted.result?.cancelReason == "mvcc: compacted" && compacted.result?.header?.revision == nil)
        let error = try read(
            #"{"error":{"grpc_code":14,"http_code":503,"message":"no leader","code":14}}"#,
            as: Wire.WatchMessage.self)
        #expect(error.error?.code == 14 && error.error?.message == "no leader" && error.result == nil)
    }

    /// The camel-case spellings of the names read, as the decoder that converted from snake case read them too.
    @Test func camelCaseNamesAreReadToo() throws {
        let answer = try read(
            #"{"result":{"compactRevision":"3","cancelReason":"r","events":[{"kv":{"modRevision":"2","#
                + #""createRevision":"1"}}]}}"#,
            as: Wire.WatchMessage.self)
        #expect(answer.result?.compactRevision?.value == 3 && answer.result?.cancelReason == "r")
        #expect(answer.result?.events?.first?.kv?.modRevision?.value == 2)
        #expect(answer.result?.events?.first?.kv?.createRevision?.value == 1)
    }

    @Test func escapesInNamesAndStringsAreDecoded() throws {
        let answer = try read(
            #"{"he\u0061der":{"revision":"1"},"token":"\ud83d\ude00 \u00e9\t\/\b\f\r\n"}"#,
            as: Wire.HeaderResponse.self)
        #expect(answer.header.revision.value == 1)
        #expect(
            try read(#"{"token":"\ud83d\ude00 \u00e9\t\/\b\f\r\n"}"#, as: Wire.AuthenticateResponse.self).token
                == "😀 é\t/\u{08}\u{0C}\r\n")
        #expect(try read(#"{"token":"caf\u00E9"}"#, as: Wire.AuthenticateResponse.self).token == "café")
    }

    // MARK: Refusals

    @Test(arguments: [
        (#"{}"#, #"no "header" in the answer"#),
        (#"{"header":{}}"#, #"no "revision" in the header"#),
        (#"{"header":null}"#, #"no "header" in the answer"#),
        (#"{"header":{"revision":12}}"#, "byte 22: expected an int64 (a string of digits)"),
        (#"{"header":{"revision":"12a"}}"#, "byte 22: the string is not an int64"),
        (#"{"header":{"revision":"1"},"kvs":[{"key":"a b="}]}"#, "byte 41: the string is not base64"),
        (#"{"header":{"revision":"1"},"kvs":{}}"#, "byte 33: expected an array"),
        (#"{"header":{"revision":"1"}} x"#, "byte 28: more text after the value"),
        (#"{"header":{"revision":"1"}"#, "byte 26: the text ends before the value does"),
        (#"{"header":{"revision":"1"},}"#, "byte 27: expected a field name"),
        (#"{"header":{"revision":"1"} "more":true}"#, "byte 27: expected a comma or the end of the object"),
        (#"{"header":{"revision":"1"},"more":tru}"#, "byte 34: expected true"),
        (#"{"header":{"revision":"1"},"x":01}"#, "byte 31: a number with a leading zero"),
        (#"{"header":{"revision":"1"},"x":1.}"#, "byte 31: a number with no digit after its point"),
        (#"{"header":{"revision":"1"},"x":-}"#, "byte 31: expected a value"),
        (#"{"header":{"revision":"1"},"x":"a"#, "byte 31: the text ends inside a string"),
        ("{\"header\":{\"revision\":\"1\"},\"x\":\"a\u{01}\"}", "byte 33: a control character in a string"),
        (#"{"header":{"revision":"1"},"x":"\q"}"#, "byte 32: an unknown escape"),
        (#"{"header":{"revision":"1"},"x":"\ud83d"}"#, "byte 32: a lone surrogate in an escape"),
        (#"{"header":{"revision":"1"},"x":"\ude00"}"#, "byte 32: a lone surrogate in an escape"),
        (
            #"{"header":{"revision":"1"},"x":"\u12g4"}"#,
            "byte 32: a \\u escape with a character that is not hexadecimal"
        ),
        ("", "byte 0: the text ends before the value does"),
        ("[]", "byte 0: expected an object"),
    ])
    func whatIsNotTheGatewaysJSONIsRefusedSayingWhere(_ text: String, _ reason: String) {
        let said = refusal(text, as: Wire.RangeResponse.self)
        #expect(said?.contains(reason) == true, "\(text): \(said ?? "read")")
    }

    /// A value nested deeper than a decoder goes is refused, without overflowing the stack on the way.
    @Test func deepNestingIsRefused() {
        let depth = 100_000
        let text =
            #"{"header":{"revision":"1"},"x":"# + String(repeating: "[", count: depth)
            + String(repeating: "]", count: depth) + "}"
        #expect(refusal(text, as: Wire.RangeResponse.self)?.contains("nested deeper than 128") == true)
        let fine =
            #"{"header":{"revision":"1"},"x":"# + String(repeating: "[", count: 120)
            + String(repeating: "]", count: 120) + "}"
        #expect(refusal(fine, as: Wire.RangeResponse.self) == nil)
    }
}
