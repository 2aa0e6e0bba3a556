import Mustache

/// Text made safe for HTML and SVG text and attribute values: `&`, `<`, `>`, `"` and `'`
/// become character references wherever they occur.
///
/// The text is walked by Unicode scalar, never by `Character`: a `"` followed by a
/// combining mark (U+0301) is one `Character` that is not `"`, and a prepend mark
/// (U+0600) before `<` is one that is not `<`; an escaper that compares `Character`s
/// lets both through raw, and a device name such as `x"́ autofocus onfocus=…` would
/// then open an attribute. The markup parser sees scalars, and so does this function.
///
/// - Complexity: O(*n*) in the scalars of `text`.
func escapeMarkup(_ text: String) -> String {
    var result = ""
    result.unicodeScalars.reserveCapacity(text.utf8.count)
    for scalar in text.unicodeScalars {
        switch scalar {
        case "&": result.unicodeScalars.append(contentsOf: "&amp;".unicodeScalars)
        case "<": result.unicodeScalars.append(contentsOf: "&lt;".unicodeScalars)
        case ">": result.unicodeScalars.append(contentsOf: "&gt;".unicodeScalars)
        case "\"": result.unicodeScalars.append(contentsOf: "&quot;".unicodeScalars)
        case "'": result.unicodeScalars.append(contentsOf: "&#39;".unicodeScalars)
        default: result.unicodeScalars.append(scalar)
        }
    }
    return result
}

/// The templates' content type: swift-mustache's own HTML escaping compares
/// `Character`s (see ``escapeMarkup(_:)``), so every template starts with
/// `{{% CONTENT_TYPE: FRAMESCOPE_HTML}}` and its `{{value}}`s are escaped per scalar.
struct ScalarHTMLContentType: MustacheContentType {
    /// The name the templates' pragma uses.
    static let name = "FRAMESCOPE_HTML"

    func escapeText(_ text: String) -> String { escapeMarkup(text) }

    /// Registers the content type with swift-mustache (before any template is parsed).
    static func register() {
        MustacheContentTypes.register(ScalarHTMLContentType(), named: name)
    }
}
