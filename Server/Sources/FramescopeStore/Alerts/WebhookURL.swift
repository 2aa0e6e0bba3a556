import Foundation

/// Why a webhook URL is refused, for a person (the field is always `url`).
public struct WebhookURLError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong with the URL.
    public var message: String

    /// An error saying `message`.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}

/// The rules for a webhook's URL, checked when a webhook is added (the API, the CLI and
/// the store alike): an absolute `http` or `https` URL with a host, at most
/// ``maximumLength`` bytes, no user name or password in it (they would be shown in every
/// listing), no fragment, and no whitespace or control characters.
///
/// Which addresses a URL may name is the operator's concern: only the app's admin key can
/// add a webhook, and docs/security.md says what that means for requests to internal
/// addresses (SSRF). Redirects are never followed.
public enum WebhookURL {
    /// The longest URL accepted, in UTF-8 bytes.
    public static let maximumLength = 2048

    /// What is wrong with `text` as a webhook URL, or `nil` when it is acceptable.
    public static func problem(_ text: String) -> WebhookURLError? {
        guard !text.isEmpty else { return WebhookURLError("url must be an http or https URL, not empty") }
        guard text.utf8.count <= maximumLength else { return WebhookURLError("url must be at most \(maximumLength) bytes, not \(text.utf8.count)") }
        guard !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F || !$0.isASCII }) else {
            return WebhookURLError("url may not contain spaces, control characters or non-ASCII text (percent-encode it)")
        }
        if let bad = text.unicodeScalars.first(where: { !allowed.contains($0) }) {
            return WebhookURLError("url may not contain '\(bad)' (RFC 3986 allows letters, digits and -._~:/?#[]@!$&'()*+,;=%; percent-encode others)")
        }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            return WebhookURLError("url must be an absolute http or https URL")
        }
        guard scheme == "http" || scheme == "https" else {
            return WebhookURLError("url must use http or https, not '\(scheme.prefix(32))'")
        }
        guard let host = components.host, !host.isEmpty else { return WebhookURLError("url must name a host") }
        guard components.user == nil, components.password == nil else {
            return WebhookURLError("url may not carry a user name or password; put a token in the path or query instead")
        }
        guard components.fragment == nil else { return WebhookURLError("url may not have a fragment (#…)") }
        if let port = components.port, !(1...65_535).contains(port) { return WebhookURLError("url's port must be 1–65535") }
        guard URL(string: text) != nil else { return WebhookURLError("url must be an absolute http or https URL") }
        guard let shape = try? Regex(pattern), (try? shape.wholeMatch(in: text)) != nil else {
            return WebhookURLError("url must be http(s)://HOST[:PORT][/PATH][?QUERY] with a host of letters, digits, hyphens and dots or a bracketed IPv6 address, and a path and query of RFC 3986's characters")
        }
        return nil
    }

    /// The URL's shape as a regular expression, the same text as the `url` pattern of
    /// `openapi.json` (a test holds them equal), so that every URL the collector accepts
    /// matches the document: scheme, a host of DNS labels (or an IPv4 address) or a
    /// bracketed IPv6 address, a port, a path and a query of RFC 3986's characters.
    public static let pattern = #"^[Hh][Tt][Tt][Pp][Ss]?://([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?(/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*)?(\?[A-Za-z0-9._~!$&'()*+,;=:@%/?-]*)?$"#

    /// The characters RFC 3986 allows in a URL: unreserved, reserved and `%`.
    private static let allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=%")

    /// `text` when it is an acceptable webhook URL.
    /// - Throws: ``WebhookURLError`` saying what is wrong.
    public static func validated(_ text: String) throws(WebhookURLError) -> String {
        if let problem = problem(text) { throw problem }
        return text
    }
}
