/// The processes of a PC that present frames without being what anyone records a capture
/// for: the compositor, the shell, overlays and launchers. PresentMon records every process
/// that presents by default, and the compositor presents as often as the display refreshes,
/// so without this list a windowed game at or above the refresh rate loses to `dwm.exe`.
///
/// This is the one list; docs/traces.md ("Recordings of several applications") prints it.
/// A name matches without regard to case, with or without `.exe`.
enum SystemProcesses {
    /// Each process by its name without `.exe`, lowercased, and what it is.
    static let known: [(name: String, reason: String)] = [
        ("dwm", "the compositor"),
        ("explorer", "the Windows shell"),
        ("shellexperiencehost", "the Windows shell"),
        ("startmenuexperiencehost", "the Windows shell"),
        ("searchhost", "the Windows shell"),
        ("searchapp", "the Windows shell"),
        ("textinputhost", "the Windows shell"),
        ("gamebar", "Xbox Game Bar, an overlay"),
        ("steamwebhelper", "Steam's overlay and browser"),
        ("steam", "a game launcher"),
        ("epicgameslauncher", "a game launcher"),
        ("battle.net", "a game launcher"),
        ("discord", "Discord, an overlay"),
        ("nvidia share", "NVIDIA's overlay"),
        ("nvidia overlay", "NVIDIA's overlay"),
        ("rtss", "RivaTuner's overlay"),
    ]

    /// What `application` is when it is a known system process, else `nil`.
    static func reason(for application: String) -> String? {
        var name = application.lowercased()
        if name.hasSuffix(".exe") { name.removeLast(4) }
        return known.first { $0.name == name }?.reason
    }
}
