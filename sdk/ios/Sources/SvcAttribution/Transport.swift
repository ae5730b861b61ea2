import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An HTTP answer: its status and body.
struct HTTPAnswer: Sendable {
    let status: Int
    let body: Data
}

/// Posts a JSON body and answers the service's reply; throws when no reply came (no network, a
/// refused connection, a timeout, a cancelled request).
protocol HTTPTransport: Sendable {
    func post(_ url: URL, json: Data) async throws -> HTTPAnswer
}

/// The default transport: one `URLSession` without cookies, cache or credential storage.
struct URLSessionTransport: HTTPTransport {
    let session: URLSession
    /// URLSession's own limit, so that a connection given up on is also closed.
    let timeout: TimeInterval

    static let shared = URLSessionTransport(timeout: Limits.requestSeconds)

    init(timeout: TimeInterval) {
        let configuration = URLSessionConfiguration.ephemeral
        // The session's limits, not only the request's: Linux's URLSession reads only these.
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        session = URLSession(configuration: configuration)
        self.timeout = timeout
    }

    func post(_ url: URL, json: Data) async throws -> HTTPAnswer {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.httpShouldHandleCookies = false
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.httpBody = json
        let (body, response) = try await session.data(for: request)
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return HTTPAnswer(status: http.statusCode, body: body)
    }
}

/// The time limits and caps of CONTRACT 11.
enum Limits {
    static let requestSeconds: TimeInterval = 10
    static let clipboardSeconds: TimeInterval = 30
    static let pendingPurchases = 100
    /// Counted in UTF-16 units, as the service counts it.
    static let transactionIDLength = 128
}
