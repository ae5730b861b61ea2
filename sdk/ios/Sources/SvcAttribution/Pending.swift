import Foundation

/// An install that could not be sent yet, kept under `svc_pending_install` so that it is sent
/// again as first tried: its time, click token and code (`""` once sent).
struct PendingInstall: Equatable {
    var occurredAt: String
    var clipboardToken: String?
    var code: String?

    init(occurredAt: String, clipboardToken: String?, code: String?) {
        self.occurredAt = occurredAt
        self.clipboardToken = clipboardToken
        self.code = code
    }

    /// The install `stored` holds, or `nil` (nothing pending, or not the SDK's own JSON).
    init?(stored: String?) {
        guard let stored, let json = JSONValue(parsing: stored), let occurredAt = json["occurred_at"]?.string else { return nil }
        let token = json["clipboard_token"]
        let code = json["code"]
        guard token == nil || token?.string != nil, code == nil || code?.string != nil else { return nil }
        self.init(occurredAt: occurredAt, clipboardToken: token?.string, code: code?.string)
    }

    var json: JSONValue {
        .object(["occurred_at": .string(occurredAt), "clipboard_token": clipboardToken.map(JSONValue.string), "code": code.map(JSONValue.string)])
    }
}

/// A purchase waiting to be sent, one item of `svc_pending_purchases` (a JSON array, oldest first).
struct PendingPurchase: Equatable, Sendable {
    var transactionID: String
    var amount: Decimal
    var currency: String
    var code: String?
    var occurredAt: String

    init(transactionID: String, amount: Decimal, currency: String, code: String?, occurredAt: String) {
        self.transactionID = transactionID
        self.amount = amount
        self.currency = currency
        self.code = code
        self.occurredAt = occurredAt
    }

    /// The purchase an item of the stored array holds, or `nil` when it is not one.
    init?(_ json: JSONValue) {
        guard let transactionID = json["transaction_id"]?.string, let amount = json["amount"]?.number,
              let currency = json["currency"]?.string, let occurredAt = json["occurred_at"]?.string else { return nil }
        let code = json["code"]
        guard code == nil || code?.string != nil else { return nil }
        self.init(transactionID: transactionID, amount: amount, currency: currency, code: code?.string, occurredAt: occurredAt)
    }

    var json: JSONValue {
        .object([
            "transaction_id": .string(transactionID),
            "amount": .number(amount),
            "currency": .string(currency),
            "code": code.map(JSONValue.string),
            "occurred_at": .string(occurredAt),
        ])
    }
}
