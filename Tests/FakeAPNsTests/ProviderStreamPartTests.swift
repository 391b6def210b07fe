import CNGHTTP2
import Foundation
import Testing

@testable import FakeAPNs

/// The values the provider connection's two handlers pass each other.
@Suite struct ProviderStreamPartTests {
    /// `NIOAny` keeps a value of up to three words inline and boxes a larger one: a part that grew would
    /// cost every request an allocation a way up and another a way down.
    @Test func partsFitInlineInNIOAny() {
        #expect(MemoryLayout<ProviderStreamPart>.size <= 3 * MemoryLayout<Int>.size)
        #expect(MemoryLayout<ProviderOutboundPart>.size <= 3 * MemoryLayout<Int>.size)
    }

    /// Identifiers new in every answer go to nghttp2 marked NO_INDEX; the fields every answer repeats
    /// may be indexed.
    @Test func answerIdentifiersAreNotIndexed() {
        var nameValues = NGHTTP2NameValues()
        var flags: [String: UInt8] = [:]
        let fields = [(":status", "200"), ("apns-id", "A"), ("apns-unique-id", "b"), ("content-type", "x")]
        let result = nameValues.with(fields) { pairs, count in
            for pair in UnsafeBufferPointer(start: pairs, count: count) {
                let name = String(decoding: UnsafeBufferPointer(start: pair.name, count: pair.namelen), as: UTF8.self)
                flags[name] = pair.flags
            }
            return 0
        }
        #expect(result == 0)
        let noIndex = UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue)
        #expect(flags == [":status": 0, "apns-id": noIndex, "apns-unique-id": noIndex, "content-type": 0])
    }
}
