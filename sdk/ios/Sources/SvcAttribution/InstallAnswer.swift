/// The service's answer to an install (`POST /api/public/attribution/installs`), whole.
///
/// Encoding it gives the service's JSON back, `null`s included.
public struct InstallAnswer: Codable, Sendable, Equatable {
    /// `true` when the service recorded the install, now or before.
    public let ok: Bool
    /// `true` when the service already had this install ID (a retry).
    public let duplicate: Bool
    /// The install as the service recorded it.
    public let install: Install

    enum CodingKeys: String, CodingKey {
        case ok
        case duplicate
        case install
    }

    /// Makes an answer, as the service would send it (for previews and tests).
    public init(ok: Bool, duplicate: Bool, install: Install) {
        self.ok = ok
        self.duplicate = duplicate
        self.install = install
    }

    /// An install and what it was credited to.
    public struct Install: Codable, Sendable, Equatable {
        /// The install ID the SDK sent.
        public let installID: String
        /// `ios` or `android`.
        public let platform: String
        /// Whether a link, a code or an IP match credits the install.
        public let attributed: Bool
        /// How the install was credited.
        public let resolutionMethod: ResolutionMethod
        /// How sure the match is: 0.95 clipboard, 0.9 code, 0.6 IP (report-only), 0 unattributed.
        public let confidence: Double
        /// The creator link the click token came from; `nil` for codes and unattributed installs.
        public let link: Link?
        /// The creator code that credits the install, if any.
        public let code: String?
        /// The creator credited, if any.
        public let creator: Creator?

        enum CodingKeys: String, CodingKey {
            case installID = "install_id"
            case platform
            case attributed
            case resolutionMethod = "resolution_method"
            case confidence
            case link
            case code
            case creator
        }

        /// Makes an install, as the service would send it (for previews and tests).
        public init(installID: String, platform: String, attributed: Bool, resolutionMethod: ResolutionMethod,
                    confidence: Double, link: Link?, code: String?, creator: Creator?) {
            self.installID = installID
            self.platform = platform
            self.attributed = attributed
            self.resolutionMethod = resolutionMethod
            self.confidence = confidence
            self.link = link
            self.code = code
            self.creator = creator
        }

        /// Encodes the install as the service sends it: an absent link, code or creator is `null`
        /// (written by hand: the synthesized encoding would leave them out).
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(installID, forKey: .installID)
            try container.encode(platform, forKey: .platform)
            try container.encode(attributed, forKey: .attributed)
            try container.encode(resolutionMethod, forKey: .resolutionMethod)
            try container.encode(confidence, forKey: .confidence)
            try container.encode(link, forKey: .link)
            try container.encode(code, forKey: .code)
            try container.encode(creator, forKey: .creator)
        }
    }

    /// A creator link: its vanity domain and slug (empty for the domain's root link).
    public struct Link: Codable, Sendable, Equatable {
        /// The link's ID at the service.
        public let id: Int
        /// The vanity domain, `maya.link`.
        public let domain: String
        /// The path after the domain; empty for the domain's root link.
        public let slug: String

        /// Makes a link (for previews and tests).
        public init(id: Int, domain: String, slug: String) {
            self.id = id
            self.domain = domain
            self.slug = slug
        }
    }

    /// A creator: the ID and name the brand gave them.
    public struct Creator: Codable, Sendable, Equatable {
        /// The creator's ID at the service.
        public let id: String
        /// The creator's name.
        public let name: String

        /// Makes a creator (for previews and tests).
        public init(id: String, name: String) {
            self.id = id
            self.name = name
        }
    }

    /// How an install was credited (SPEC 3.1). A value this version does not know decodes too.
    public struct ResolutionMethod: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
        /// A click token read from the clipboard, or pasted, matched a click (confidence 0.95).
        public static let clipboard = ResolutionMethod(rawValue: "clipboard")
        /// A creator code typed in the app matched (0.9).
        public static let code = ResolutionMethod(rawValue: "code")
        /// The device's hashed IP address matched a recent click on an app link (0.6, report-only).
        public static let ip = ResolutionMethod(rawValue: "ip")
        /// Nothing matched.
        public static let unattributed = ResolutionMethod(rawValue: "unattributed")

        /// The service's name for the method.
        public let rawValue: String

        /// The method the service names `rawValue`.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// Decodes the method from the service's string, known to this version or not.
        public init(from decoder: any Decoder) throws {
            rawValue = try decoder.singleValueContainer().decode(String.self)
        }

        /// Encodes the method as the service's string.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }

        /// The service's name for the method, `clipboard`.
        public var description: String { rawValue }
    }
}
