import Foundation
import Testing

/// PrivacyInfo.xcprivacy: what Xcode folds into the app's privacy report.
@Suite("privacy manifest")
struct PrivacyManifestTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Sources/SvcAttribution").standardized

    static func manifest() throws -> [String: Any] {
        let data = try Data(contentsOf: sources.appendingPathComponent("PrivacyInfo.xcprivacy"))
        let plist = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        return try #require(plist as? [String: Any])
    }

    @Test("no tracking; purchase history, a device ID and advertising data, linked, for analytics; UserDefaults for CA92.1 only")
    func declarations() throws {
        let manifest = try Self.manifest()
        #expect(manifest["NSPrivacyTracking"] as? Bool == false)
        #expect((manifest["NSPrivacyTrackingDomains"] as? [Any])?.isEmpty == true)

        let collected = try #require(manifest["NSPrivacyCollectedDataTypes"] as? [[String: Any]])
        #expect(collected.compactMap { $0["NSPrivacyCollectedDataType"] as? String }.sorted() == [
            "NSPrivacyCollectedDataTypeAdvertisingData",
            "NSPrivacyCollectedDataTypeDeviceID",
            "NSPrivacyCollectedDataTypePurchaseHistory",
        ])
        for type in collected {
            #expect(type["NSPrivacyCollectedDataTypeLinked"] as? Bool == true)
            #expect(type["NSPrivacyCollectedDataTypeTracking"] as? Bool == false)
            #expect(type["NSPrivacyCollectedDataTypePurposes"] as? [String] == ["NSPrivacyCollectedDataTypePurposeAnalytics"])
        }

        let accessed = try #require(manifest["NSPrivacyAccessedAPITypes"] as? [[String: Any]])
        #expect(accessed.count == 1)
        #expect(accessed.first?["NSPrivacyAccessedAPIType"] as? String == "NSPrivacyAccessedAPICategoryUserDefaults")
        #expect(accessed.first?["NSPrivacyAccessedAPITypeReasons"] as? [String] == ["CA92.1"])
        #expect(Set(manifest.keys) == ["NSPrivacyTracking", "NSPrivacyTrackingDomains", "NSPrivacyCollectedDataTypes", "NSPrivacyAccessedAPITypes"])
    }

    @Test("the library uses no required-reason API but UserDefaults (no uptime, boot time, file timestamps, disk space, keyboards)")
    func noOtherRequiredReasonAPI() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.sources.path).filter { $0.hasSuffix(".swift") }
        #expect(files.count > 5)
        let required = ["systemUptime", "mach_absolute_time", "clock_gettime", "ProcessInfo", "creationDate", "modificationDate",
                        "contentModificationDate", "fileModificationDate", "attributesOfItem", "volumeAvailableCapacity",
                        "systemFreeSize", "statfs", "activeInputModes", "UIDevice", "identifierForVendor", "advertisingIdentifier",
                        "ContinuousClock", "SuspendingClock", "DispatchTime"]
        for file in files {
            let source = try String(contentsOf: Self.sources.appendingPathComponent(file), encoding: .utf8)
            for name in required { #expect(!source.contains(name), "\(file) uses \(name)") }
        }
    }

    @Test("the manifest ships with the library: SwiftPM copies it into the target's resources")
    func shipped() throws {
        let manifestURL = Self.sources.appendingPathComponent("../../../../Package.swift").standardized
        let manifest = try String(contentsOf: manifestURL, encoding: .utf8)
        #expect(manifest.contains(#"resources: [.copy("PrivacyInfo.xcprivacy")]"#))
        // The built resource bundle beside the test binary (a flat folder on Linux, a bundle on macOS).
        let build = Bundle.main.bundleURL.deletingLastPathComponent()
        let candidates = ["SvcAttribution_SvcAttribution.resources/PrivacyInfo.xcprivacy",
                          "SvcAttribution_SvcAttribution.bundle/PrivacyInfo.xcprivacy",
                          "SvcAttribution_SvcAttribution.bundle/Contents/Resources/PrivacyInfo.xcprivacy"]
        let search = [build, Bundle.main.bundleURL, build.deletingLastPathComponent()]
        let found = search.flatMap { base in candidates.map { base.appendingPathComponent($0).path } }
            .contains { FileManager.default.fileExists(atPath: $0) }
        #expect(found, "no built PrivacyInfo.xcprivacy near \(build.path)")
    }
}
