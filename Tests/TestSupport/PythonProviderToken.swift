import Foundation

/// Provider tokens made by Python's `cryptography` package, as a backend written in another language
/// would make them: an independent check on FakeAPNs's verifier.
public enum PythonProviderToken {
    static let script = """
        import base64, json, sys, time
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
        key = serialization.load_pem_private_key(open(sys.argv[1], 'rb').read(), None)
        b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b'=').decode()
        signing_input = b64(json.dumps({'alg': 'ES256', 'kid': sys.argv[2]}).encode()) + '.' + \\
            b64(json.dumps({'iss': sys.argv[3], 'iat': int(time.time())}).encode())
        r, s = decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
        print(signing_input + '.' + b64(r.to_bytes(32, 'big') + s.to_bytes(32, 'big')))
        """

    /// Signs an ES256 JWT with the `.p8` key at `keyFile`.
    public static func sign(keyFile: String, keyId: String, teamId: String) async throws -> String {
        let result = try await ChildProcess.run(PackagePaths.python, ["-c", script, keyFile, keyId, teamId])
        guard result.status == 0 else { throw PeerMissing(detail: result.transcript) }
        return result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public struct PeerMissing: Error, CustomStringConvertible {
        public var detail: String
        public var description: String {
            "python could not sign a provider token (ci/test installs the peers into .venv): \(detail)"
        }
    }
}
