import ArgumentParser
import Foundation
import FramescopeCore
import FramescopeSimulation

/// `framescope dataset`: test data sets.
struct DatasetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dataset",
        abstract: "Generate test data sets.",
        subcommands: [MessagesCommand.self]
    )
}

/// `framescope dataset messages`: the thesis' message list.
struct MessagesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "messages",
        abstract: "Generate the thesis' chat message list as JSON, or as a page of plain or heavy cells.",
        discussion: """
            Messages 0…n−1, each in or out with equal chance. With --media-probability a \
            message is a media message with 1–3 items from a pool of 100 static and 10 \
            animated image names (duplicates allowed); otherwise it is a text message with \
            one of three contents, small, medium or large. Fields: messageId, direction, \
            and message or mediaItems.
            """
    )

    @Option(help: "Number of messages.")
    var count: Int = 500

    @Option(help: "Chance that a message is a media message.")
    var mediaProbability: Double = 0.25

    @Option(help: "Seed; the same seed gives the same list.")
    var seed: UInt64 = 1

    @Option(help: ArgumentHelp("Where to write the JSON (or the page); stdout by default.", valueName: "file"))
    var output: String?

    @Flag(help: "Write the list as a self-contained HTML page to scroll with 'framescope record chrome', instead of JSON.")
    var html = false

    @Option(help: "With --html: plain (text only) or heavy (large images, gradients, shadows and blur) cells.")
    var cells: MessageDataset.Cells = .plain

    mutating func validate() throws {
        if count < 0 || count > 10_000_000 { throw ValidationError("--count must lie between 0 and 10000000") }
        if !(mediaProbability >= 0 && mediaProbability <= 1) { throw ValidationError("--media-probability must lie between 0 and 1") }
    }

    func run() throws {
        let messages = MessageDataset.generate(count: count, mediaProbability: mediaProbability, seed: seed)
        if html {
            try writeOutput(MessageDataset.html(messages, cells: cells), to: output)
        } else {
            try writeOutput(try encodeJSON(messages) + "\n", to: output)
        }
    }
}

extension MessageDataset.Cells: @retroactive ExpressibleByArgument {}

