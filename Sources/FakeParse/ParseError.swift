import Foundation
import HTTPTypes
import Hummingbird

/// An error in Parse's `{"code": …, "error": …}` shape, with the HTTP status Parse Server uses.
struct ParseError: Error, HTTPResponseError {
    var httpStatus: HTTPResponse.Status
    var code: Int?
    var message: String

    var status: HTTPResponse.Status { httpStatus }
    func response(from request: Request, context: some RequestContext) throws -> Response {
        var object: [String: Any] = ["error": message]
        if let code { object["code"] = code }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return Response(
            status: httpStatus, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static let unauthorized = ParseError(httpStatus: .forbidden, code: nil, message: "unauthorized")
    static let masterKeyRequired = ParseError(
        httpStatus: .forbidden, code: nil, message: "unauthorized: master key is required")
    static func invalidJSON(_ detail: String) -> ParseError {
        ParseError(httpStatus: .badRequest, code: 107, message: "invalid JSON: \(detail)")
    }
    static func pushMisconfigured(_ message: String) -> ParseError {
        ParseError(httpStatus: .badRequest, code: 115, message: message)
    }
    static let missingInstallationId = ParseError(
        httpStatus: .badRequest, code: 135,
        message: "at least one ID field (deviceToken, installationId) must be specified in this operation")
}
