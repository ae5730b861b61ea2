import Foundation

/// The service's public installs and events endpoints as SPEC 4.2 describes them, in memory: for
/// driving the SDK over real HTTP. One pixel key is known; one click token and one code credit.
final class FakeService: Sendable {
    static let pixelKey = "pk_live"
    static let clickToken = "svc_7Hq2mXw9"
    static let code = "MAYA24"

    private let installs = Locked<[String: Json]>([:])
    private let transactions = Locked<Set<String>>([])
    /// When set, every request is answered with this status (an outage, a rate limit).
    let outage = Locked<Int?>(nil)

    func reply(to request: LoopbackServer.Request) -> LoopbackServer.Reply {
        if let status = outage.current { return .answer(status: status, body: #"{"error":"unavailable"}"#) }
        let body = request.json
        guard request.method == "POST", body["pixel_key"]?.string == Self.pixelKey else {
            return .answer(status: 403, body: #"{"error":"invalid_pixel_key"}"#)
        }
        switch request.path {
        case "/api/public/attribution/installs": return install(body)
        case "/api/public/attribution/events": return event(body)
        default: return .answer(status: 404, body: #"{"error":"not_found"}"#)
        }
    }

    private func install(_ body: Json) -> LoopbackServer.Reply {
        guard let id = body["install_id"]?.string, !id.isEmpty else { return .answer(status: 422, body: #"{"error":"install_id_required"}"#) }
        guard ["ios", "android"].contains(body["platform"]?.string ?? "") else { return .answer(status: 422, body: #"{"error":"invalid_platform"}"#) }
        return installs.withValue { installs in
            if let known = installs[id] {
                return .answer(status: 200, body: Json.object(["ok": .bool(true), "duplicate": .bool(true), "install": known]).description)
            }
            let link = Json.object(["id": .number(42), "domain": .string("maya.link"), "slug": .string("app")])
            let maya = Json.object(["id": .string("cr_maya"), "name": .string("Maya Lopez")])
            // The clipboard token wins over a code (SPEC 3.1).
            let (method, confidence, creditedLink, code, creator): (String, Double, Json, Json, Json) =
                body["clipboard_token"]?.string == Self.clickToken ? ("clipboard", 0.95, link, .null, maya)
                : body["code"]?.string == Self.code ? ("code", 0.9, .null, .string(Self.code), maya)
                : ("unattributed", 0, .null, .null, .null)
            let install = Json.object([
                "install_id": .string(id), "platform": body["platform"] ?? .null, "attributed": .bool(method != "unattributed"),
                "resolution_method": .string(method), "confidence": .number(confidence), "link": creditedLink, "code": code, "creator": creator,
            ])
            installs[id] = install
            return .answer(status: 201, body: Json.object(["ok": .bool(true), "duplicate": .bool(false), "install": install]).description)
        }
    }

    private func event(_ body: Json) -> LoopbackServer.Reply {
        if let amount = body["amount"]?.number, amount < 0, body["event_type"]?.string != "refund" {
            return .answer(status: 422, body: #"{"error":"invalid_amount"}"#)
        }
        let key = "\(body["event_type"]?.string ?? "purchase"):\(body["transaction_id"]?.string ?? "")"
        let duplicate = transactions.withValue { !$0.insert(key).inserted }
        return .answer(status: 200, body: #"{"ok":true,"duplicate":\#(duplicate)}"#)
    }
}
