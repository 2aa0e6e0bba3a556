/// Stable screen names from what the platform shows: an explicit override, an
/// accessibility identifier, or the type name of a view controller or a SwiftUI view.
///
/// A type name loses its module prefix and private-context parts, its generic parameters
/// (a SwiftUI host or `ModifiedContent` is named for the view it wraps) and one of the
/// suffixes `ViewController`, `Controller`, `View` or `Screen`:
///
/// | shown | screen name |
/// |---|---|
/// | `MyApp.FeedViewController` | `Feed` |
/// | `MyApp.ListViewController<MyApp.Item>` | `List` |
/// | `SwiftUI.UIHostingController<SwiftUI.ModifiedContent<MyApp.SettingsView, SwiftUI._PaddingLayout>>` | `Settings` |
/// | `MyApp.(unknown context at $1004c8f20).ProfileScreen` | `Profile` |
/// | `MyApp.ViewController` | `ViewController` (nothing would be left) |
/// | `UINavigationController` | none: a container, its visible child is named |
///
/// Containers (navigation, tab, split and page controllers, SwiftUI's hosts of
/// navigation stacks) and the system's own controllers (keyboards, alerts, menus) are
/// not screens: ``screenName(typeName:accessibilityIdentifier:override:parentTypeName:)`` answers `nil` for
/// them, so the visible child that appears next names the screen.
public struct ScreenNaming: Sendable, Hashable {
    /// Extra type names (after the module prefix is removed) to treat as containers: an
    /// app's own container controllers.
    public var containers: Set<String>
    /// Extra type names never to name a screen after.
    public var ignored: Set<String>

    /// A naming with the system's containers and `containers` and `ignored` besides.
    public init(containers: Set<String> = [], ignored: Set<String> = []) {
        self.containers = containers
        self.ignored = ignored
    }

    /// UIKit's and SwiftUI's containers: their visible child is the screen.
    public static let systemContainers: Set<String> = [
        "UINavigationController", "UITabBarController", "UISplitViewController", "UIPageViewController",
        "UISearchController", "UIReferenceLibraryViewController", "UIActivityViewController",
        "NavigationStackHostingController", "UIKitNavigationController", "SplitViewNavigationController",
        "NotifyingMulticolumnSplitViewController",
    ]

    /// The system's own controllers that are not screens of the app: keyboards, input
    /// views, alerts, edit menus, status bar and presentation helpers.
    public static let systemIgnored: Set<String> = [
        "UIInputWindowController", "UICompatibilityInputViewController", "UISystemKeyboardDockController",
        "UIEditingOverlayViewController", "UIAlertController", "UIPredictionViewController",
        "UISystemInputAssistantViewController", "UIApplicationRotationFollowingController",
        "UIApplicationRotationFollowingControllerNoTouches", "UIEditMenuViewController",
        "UIKeyboardCandidateGridCollectionViewController", "UIStatusBarViewController", "UIViewController",
    ]

    /// The screen name for something shown, or `nil` when it is a container or the
    /// system's own: the override when given, else the accessibility identifier, else
    /// the type name cleaned as the table above shows.
    ///
    /// - Parameters:
    ///   - typeName: `String(reflecting: type(of: shown))`, or `NSStringFromClass`'s answer.
    ///   - accessibilityIdentifier: The view's accessibility identifier, if any.
    ///   - override: A name the app chose (`framescopeScreenName`, `.framescopeScreen("…")`).
    ///   - parentTypeName: The type name of the controller it is a child of, if any. A child
    ///     of anything but a container (a view controller embedded in another's view) is
    ///     part of its parent's screen: `nil`, unless it has an override.
    public func screenName(typeName: String, accessibilityIdentifier: String? = nil, override: String? = nil,
                           parentTypeName: String? = nil) -> String? {
        if let override = Self.trimmed(override) { return override }
        if let parentTypeName, !isContainer(Self.bareTypeName(parentTypeName)) { return nil }
        let bare = Self.bareTypeName(typeName)
        if isContainer(bare) || Self.systemIgnored.contains(bare) || ignored.contains(bare) || bare.hasPrefix("_") { return nil }
        if let identifier = Self.trimmed(accessibilityIdentifier) { return identifier }
        let name = Self.shownTypeName(typeName)
        return name.isEmpty || Self.anonymous.contains(name) ? nil : Self.droppingSuffix(name)
    }

    /// Whether a type (its name without module prefix) is a container whose visible child is the screen.
    public func isContainer(_ bareTypeName: String) -> Bool {
        let outer = Self.withoutGenerics(bareTypeName)
        return Self.systemContainers.contains(outer) || containers.contains(bareTypeName) || containers.contains(outer)
    }

    /// The deepest screen in a chain of shown things, from the root to the visible leaf
    /// (root → navigation controller → its top controller → …): the leaf's name, or the
    /// nearest ancestor's when the leaf is a container or the system's own.
    ///
    /// - Parameter chain: Type names from the root to the leaf, each with its accessibility
    ///   identifier and override.
    public func visibleScreen(_ chain: [(typeName: String, accessibilityIdentifier: String?, override: String?)]) -> String? {
        for shown in chain.reversed() {
            if let name = screenName(typeName: shown.typeName, accessibilityIdentifier: shown.accessibilityIdentifier, override: shown.override) {
                return name
            }
        }
        return nil
    }

    /// A type name without module prefixes and private-context parts, generic parameters
    /// kept: `SwiftUI.UIHostingController<MyApp.Root>` → `UIHostingController<MyApp.Root>`.
    public static func bareTypeName(_ typeName: String) -> String {
        let outer = withoutGenerics(typeName)
        let generics = typeName.unicodeScalars.count > outer.unicodeScalars.count
            ? String(String.UnicodeScalarView(typeName.unicodeScalars.dropFirst(outer.unicodeScalars.count))) : ""
        return lastComponent(outer) + generics
    }

    /// The name of the type a person sees: a host or wrapper (`UIHostingController<…>`,
    /// `ModifiedContent<…>`, `Optional<…>`, `AnyView` excluded) is replaced by its first
    /// generic argument, any other type loses its generic parameters, and module prefixes go.
    public static func shownTypeName(_ typeName: String) -> String {
        var name = typeName.trimmingSpaces
        // Unwrap wrappers, at most a few levels deep.
        for _ in 0..<8 {
            let outer = lastComponent(withoutGenerics(name))
            guard wrappers.contains(outer), let argument = firstGenericArgument(name) else { break }
            name = argument
        }
        return lastComponent(withoutGenerics(name))
    }

    /// Types named for what they wrap.
    static let wrappers: Set<String> = [
        "UIHostingController", "ModifiedContent", "Optional", "_ConditionalContent", "NavigationStack", "NavigationView",
        "TupleView", "Group", "ZStack", "VStack", "HStack",
    ]

    /// Shown types that say nothing about the screen.
    static let anonymous: Set<String> = ["AnyView", "EmptyView", "Never", "Text", "Color"]

    /// Drops one of the suffixes that say "this is a screen" when something is left.
    static func droppingSuffix(_ name: String) -> String {
        // The first suffix that matches decides, so `ViewController` alone stays whole
        // rather than becoming `View`.
        for suffix in ["ViewController", "Controller", "View", "Screen"] where name.hasSuffix(suffix) {
            return name.count > suffix.count ? String(name.dropLast(suffix.count)) : name
        }
        return name
    }

    /// The name up to its first `<`.
    static func withoutGenerics(_ name: String) -> String {
        String(name.unicodeScalars.prefix { $0 != "<" }.map(Character.init))
    }

    /// The first generic argument of `Outer<First, Second>`, or `nil`.
    static func firstGenericArgument(_ name: String) -> String? {
        var depth = 0
        var argument = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            switch scalar {
            case "<":
                depth += 1
                if depth == 1 { continue }
            case ">":
                depth -= 1
                if depth == 0 { return String(argument).trimmingSpaces }
            case "," where depth == 1:
                return String(argument).trimmingSpaces
            default:
                break
            }
            if depth >= 1 { argument.append(scalar) }
        }
        return nil
    }

    /// The last dot-separated part, skipping `(unknown context at $…)` and `(extension in …)` parts.
    static func lastComponent(_ name: String) -> String {
        var parts: [String] = []
        var current = String.UnicodeScalarView()
        var parentheses = 0
        for scalar in name.unicodeScalars {
            switch scalar {
            case "(": parentheses += 1
            case ")": parentheses = max(0, parentheses - 1)
            case "." where parentheses == 0:
                parts.append(String(current))
                current = String.UnicodeScalarView()
            default:
                if parentheses == 0 { current.append(scalar) }
            }
        }
        parts.append(String(current))
        return parts.last { !$0.isEmpty }?.trimmingSpaces ?? ""
    }

    /// `text` without surrounding spaces, or `nil` when nothing is left.
    static func trimmed(_ text: String?) -> String? {
        guard let text else { return nil }
        let trimmed = text.trimmingSpaces
        return trimmed.isEmpty ? nil : trimmed
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and line breaks.
    fileprivate var trimmingSpaces: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(scalars[first...last])
    }
}
