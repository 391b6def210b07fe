import Foundation
import HarnessTimeline
import Testing

@testable import FakeAPNs

/// The payload checker against Foundation's parser: both must agree on every case, valid or not.
@Suite struct JSONObjectSyntaxTests {
    static let cases: [String] = [
        #"{}"#, #" { } "#, #"{"aps":{"content-available":1}}"#, #"{"a":[1,2.5,-3e10,0,-0.0,1E+2,true,false,null]}"#,
        #"{"s":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude80"}"#, "{\"é\":\"日本\"}", "{\"emoji\":\"🚀\"}",
        #"{"nested":{"a":{"b":{"c":[[[]]]}}}}"#, "\t{\n\"a\"\r:\n1 }\n",
        // Not a single object, or not JSON at all.
        "", " ", "[]", "1", #""a""#, "null", "{", "}", #"{"a":1"#, #"{"a":1,}"#, #"{"a" 1}"#, #"{a:1}"#,
        #"{'a':1}"#, #"{"a":01}"#, #"{"a":1.}"#, #"{"a":.5}"#, #"{"a":1e}"#, #"{"a":-}"#, #"{"a":+1}"#,
        #"{"a":tru}"#, #"{"a":True}"#, #"{"a":nul}"#, #"{"a":[1,]}"#, #"{"a":[,1]}"#, #"{} {}"#, #"{}x"#,
        #"{"a":"\x"}"#, #"{"a":"\u12"}"#, #"{"a":"\uZZZZ"}"#, #"{"a":"\ud800"}"#, #"{"a":"\udc00"}"#,
        #"{"a":"\ud800\u0041"}"#, "{\"a\":\"\u{01}\"}", "{\"a\":\"tab\there\"}", #"{"a":1}/*c*/"#, #"{"a":NaN}"#,
    ]

    /// Foundation's verdict, except that it lets a trailing comma through (`{"a":1,}`), which RFC 8259
    /// does not and the checker does not either.
    static func foundationAccepts(_ bytes: [UInt8]) -> Bool {
        (try? JSONSerialization.jsonObject(with: Data(bytes))) is [String: Any] && !hasTrailingComma(bytes)
    }

    /// A `,` followed by `}` or `]` (whitespace between), outside strings.
    static func hasTrailingComma(_ bytes: [UInt8]) -> Bool {
        var inString = false
        var escaped = false
        var afterComma = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true; afterComma = false
            case UInt8(ascii: ","): afterComma = true
            case UInt8(ascii: "}"), UInt8(ascii: "]"): if afterComma { return true }
            case 0x20, 0x0A, 0x0D, 0x09: break
            default: afterComma = false
            }
        }
        return false
    }

    static func accepts(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes(JSONObjectSyntax.isObject) }

    @Test(arguments: cases) func agreesWithJSONSerialization(_ text: String) {
        let bytes = Array(text.utf8)
        #expect(Self.accepts(bytes) == Self.foundationAccepts(bytes), "\(text.debugDescription)")
    }

    /// Where the checker follows RFC 8259 and Foundation does not.
    @Test func deliberateDifferencesFromFoundation() {
        #expect(!Self.accepts(Array(#"{"a":[1,],}"#.utf8)), "a trailing comma is not JSON")
        #expect(Self.accepts(Array(#"{"a":3e400}"#.utf8)), "the grammar sets no range on numbers")
    }

    @Test func refusesMalformedUTF8InStrings() {
        for bytes: [UInt8] in [
            [0xFF], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xC3],
            [0xE6, 0x97],
        ] {
            let payload = Array(#"{"a":""#.utf8) + bytes + Array(#""}"#.utf8)
            #expect(!Self.accepts(payload), "\(bytes)")
            #expect(Self.accepts(payload) == Self.foundationAccepts(payload), "\(bytes)")
        }
    }

    @Test func nestingIsLimitedInsteadOfOverflowingTheStack() {
        let deep = String(repeating: "[", count: 100_000)
        #expect(!Self.accepts(Array("{\"a\":\(deep)".utf8)))
        let fine = "{\"a\":" + String(repeating: "[", count: 500) + String(repeating: "]", count: 500) + "}"
        #expect(Self.accepts(Array(fine.utf8)))
    }

    /// Payloads made by mutating valid ones: a cheap differential search the fuzzer extends.
    @Test func agreesOnMutatedPayloads() {
        // A fixed seed, so that a failing mutation can be reproduced.
        var random = SplitMix64(seed: 20_261_122)
        let seeds = Self.cases.prefix(9).map { Array($0.utf8) }.filter { !$0.isEmpty }
        let alphabet = Array(#"{}[],:"\u0123456789abcdefE.+-tnrl e"#.utf8) + [0x00, 0x0A, 0xC3, 0xA9, 0xFF]
        var disagreements: [String] = []
        for _ in 0..<5000 {
            var bytes = seeds.randomElement(using: &random)!
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let position = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[position] = alphabet.randomElement(using: &random)!
                case 1: bytes.insert(alphabet.randomElement(using: &random)!, at: position)
                default: if bytes.count > 1 { bytes.remove(at: position) }
                }
            }
            // Foundation also refuses numbers beyond Double's range (3e400), which the grammar allows
            // and the checker lets through: those are not compared.
            let text = String(decoding: bytes, as: UTF8.self)
            if text.contains(/[eE][+-]?[0-9]{3,}/) { continue }
            if Self.accepts(bytes) != Self.foundationAccepts(bytes) {
                disagreements.append(text.debugDescription)
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(10))")
    }
}

@Suite struct MessageIDGeneratorTests {
    @Test func makesDistinctVersion4UUIDs() {
        var generator = MessageIDGenerator()
        var seen = Set<String>()
        for _ in 0..<10_000 {
            let id = generator.make()
            #expect(id == UUID(uuidString: id)?.uuidString, "a UUID, uppercase as UUID writes it: \(id)")
            #expect(Array(id.utf8)[14] == UInt8(ascii: "4"), "version 4: \(id)")
            #expect("89AB".utf8.contains(Array(id.utf8)[19]), "variant 10: \(id)")
            seen.insert(id)
        }
        #expect(seen.count == 10_000)
        let lower = generator.make(lowercase: true)
        #expect(lower == lower.lowercased() && UUID(uuidString: lower) != nil)
    }

    @Test func twoGeneratorsDoNotRepeatEachOther() {
        var first = MessageIDGenerator()
        var second = MessageIDGenerator()
        let a = Set((0..<1000).map { _ in first.make() })
        #expect(a.isDisjoint(with: (0..<1000).map { _ in second.make() }))
    }
}
