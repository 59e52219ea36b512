import CodableDefaults
import CodableDefaultsEtcd
import Dispatch
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The client's URLSession delegate (every call on Apple platforms, `https://` everywhere) holds at most its
/// limit of one answer: a larger one is cancelled, whether its size is announced or not. Spoken here over
/// plain HTTP/1.0 to a fake server, which Linux's URLSession reads as it reads any answer.
@Suite struct BoundedAnswersTests {
    /// Sends `answer` through a session whose delegate has `limit`; returns the outcome.
    private func fetch(_ answer: String, limit: Int) throws -> BoundedAnswers.Outcome {
        let server = try TestTCPServer(.answer(Array(answer.utf8)))
        defer { withExtendedLifetime(server) {} }  // It closes its listener when it goes away.
        let answers = BoundedAnswers(limit: limit)
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let session = URLSession(configuration: .ephemeral, delegate: answers, delegateQueue: queue)
        defer { session.invalidateAndCancel() }
        var request = URLRequest(url: try #require(URL(string: server.url + "/v3/kv/range")))
        request.httpMethod = "POST"
        request.httpBody = Data("{}".utf8)
        let outcome = Locked<BoundedAnswers.Outcome?>(nil)
        let done = DispatchSemaphore(value: 0)
        answers.start(session.dataTask(with: request)) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        return try #require(outcome.withLock { $0 })
    }

    @Test func anAnswerWithinTheLimitIsTakenWhole() throws {
        let body = String(repeating: "x", count: 5_000)
        let outcome = try fetch("HTTP/1.0 200 OK\r\nContent-Length: 5000\r\n\r\n\(body)", limit: 10_000)
        let answer = try outcome.get()
        #expect(answer.status == 200)
        #expect(answer.body == Data(body.utf8))
    }

    @Test(arguments: [true, false])
    func anAnswerOverTheLimitIsRefused(announced: Bool) throws {
        let body = String(repeating: "x", count: 300_000)
        let head = announced ? "HTTP/1.0 200 OK\r\nContent-Length: 300000\r\n\r\n" : "HTTP/1.0 200 OK\r\n\r\n"
        let outcome = try fetch(head + body, limit: 100_000)
        #expect(throws: BoundedAnswers.TooLarge.self) { try outcome.get() }
    }
}
