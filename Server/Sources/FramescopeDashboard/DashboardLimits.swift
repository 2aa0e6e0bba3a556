/// How much of a long list a dashboard page shows, so that every page stays small however
/// many screens, versions or models an app has (issue 30: a backdating client made one
/// overview with 21,025 menu entries). What is left out is said on the page, and filters
/// or a menu's search box reach it.
public enum DashboardLimits {
    /// Values per filter menu: those with the most visits in the range (the chosen one is
    /// always there too).
    public static let menuValues = 50
    /// Rows of the overview's tables (by app version, the break-down, Apple's figures) and
    /// bars of each bar list: those with the most visits.
    public static let tableRows = 30
    /// App versions the compare page's menus offer: those with the most visits.
    public static let compareVersions = 100
    /// Screens the compare page lists: regressions first, then improvements, then the rest.
    public static let compareRows = 200
}
