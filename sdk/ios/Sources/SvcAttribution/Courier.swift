import Foundation

/// What became of one request.
enum Delivery: Sendable {
    /// The service has it (2xx), with its answer.
    case delivered(Data)
    /// Not now: no network, no answer within 10 s, 429 or 5xx. Kept and sent again later.
    case retryLater
    /// Refused for good (any other status): dropped, never sent again.
    case refused
}

/// Posts the SDK's requests to the service and sorts each outcome into a `Delivery`, logging why.
struct Courier: Sendable {
    let endpoint: String
    let transport: any HTTPTransport
    let sleep: Sleep
    let log: Log

    func post(_ path: String, _ body: JSONValue) async -> Delivery {
        // The client checked the endpoint at configuration; should joining fail anyway, keep the work.
        guard let url = URL(string: endpoint + path) else {
            log("\(path): \(endpoint) is not a URL; kept for a later launch")
            return .retryLater
        }
        let transport = self.transport
        let json = Data(body.text.utf8)
        let outcome = await race({ () -> Result<HTTPAnswer, any Error> in
            do { return .success(try await transport.post(url, json: json)) } catch { return .failure(error) }
        }, within: Limits.requestSeconds, sleep: sleep)
        switch outcome {
        case .timedOut:
            log("\(path): no answer in \(Int(Limits.requestSeconds)) s; kept for a later launch")
            return .retryLater
        case .finished(.failure(let error)):
            log("\(path): network error; kept for a later launch", error)
            return .retryLater
        case .finished(.success(let answer)):
            return sort(answer, of: path)
        }
    }

    private func sort(_ answer: HTTPAnswer, of path: String) -> Delivery {
        switch answer.status {
        case 200..<300:
            guard (try? JSONSerialization.jsonObject(with: answer.body, options: .fragmentsAllowed)) != nil else {
                // Sending again is safe: the service deduplicates installs and transactions.
                log("\(path): unreadable \(answer.status) answer; kept for a later launch")
                return .retryLater
            }
            return .delivered(answer.body)
        case 429, 500...:
            log("\(path): HTTP \(answer.status); kept for a later launch")
            return .retryLater
        default:
            let text = String(decoding: answer.body.prefix(200), as: UTF8.self)
            log("\(path): refused with HTTP \(answer.status) \(text); not sent again")
            return .refused
        }
    }
}
