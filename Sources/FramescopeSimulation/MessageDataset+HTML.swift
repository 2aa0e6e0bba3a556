import FramescopeCore

extension MessageDataset {
    /// How a message list page draws its cells.
    public enum Cells: String, Sendable, CaseIterable {
        /// Text only: a text message as its lines, a media message as its image names.
        case plain
        /// The thesis' heavy cells: every message a bubble with a gradient, rounded corners,
        /// wide soft shadows (80–90 px blur radius, which software raster pays for every
        /// tile that scrolls in) and a shadowed avatar; a media message's images drawn large
        /// (1200×700 JPEGs made in the page, scaled down, blurred 10 px and shadowed).
        case heavy
    }

    /// The message list as one self-contained HTML page (no network): a scrolling list,
    /// marked `data-framescope-scroll`, that `framescope record chrome` scrolls. The page
    /// sets `window.__ready`, a promise that settles once its images are made and the first
    /// ones decoded. Text is escaped per Unicode scalar.
    public static func html(_ messages: [Message], cells: Cells) -> String {
        var rows = ""
        rows.reserveCapacity(messages.count * 200)
        for message in messages {
            let side = message.direction == .outgoing ? "out" : "in"
            var body = ""
            if let text = message.message {
                body = text.split(separator: "\n", omittingEmptySubsequences: false).map { "<p>\(escapeHTML(String($0)))</p>" }.joined()
            } else if let items = message.mediaItems {
                switch cells {
                case .plain: body = "<p class=\"media\">" + items.map { escapeHTML($0) }.joined(separator: ", ") + "</p>"
                case .heavy: body = items.map { "<img alt=\"\(escapeHTML($0))\" data-image=\"\(imageIndex($0))\">" }.joined()
                }
            }
            rows += "<div class=\"row \(side)\"><div class=\"avatar\"></div><div class=\"bubble\"><span class=\"id\">#\(message.messageId)</span>\(body)</div></div>\n"
        }
        return """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>Messages (\(cells.rawValue) cells)</title>
        <style>
        html, body { margin: 0; height: 100%; overflow: hidden; font: 15px/1.35 sans-serif; background: #f2f3f7; }
        #list { position: absolute; inset: 0; overflow-y: auto; overflow-x: hidden; }
        .row { display: flex; gap: 10px; padding: 6px 12px; }
        .row.out { flex-direction: row-reverse; }
        .bubble { max-width: 70%; background: #fff; padding: 6px 10px; border-bottom: 1px solid #ddd; }
        .bubble p { margin: 0; }
        .id { color: #667; font-size: 12px; }
        .avatar { width: 8px; }
        \(cells == .heavy ? heavyStyle : "")
        </style></head>
        <body><div id="list" data-framescope-scroll>
        \(rows)</div>
        <script>
        \(cells == .heavy ? heavyScript : "window.__ready = Promise.resolve();")
        </script></body></html>

        """
    }

    /// Which of the page's generated images an image name is drawn with (16 of them).
    static func imageIndex(_ name: String) -> Int {
        var hash: UInt32 = 2_166_136_261
        for byte in name.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return Int(hash % 16)
    }

    private static let heavyStyle = """
        .bubble { border-radius: 18px; border: 0; padding: 10px 14px; min-width: 40%;
          background: linear-gradient(135deg, #fff, #e9eefc 40%, #fbe9f2);
          box-shadow: 0 10px 80px rgba(0,0,0,.5), 0 0 40px rgba(255,0,0,.3), 0 0 0 3px rgba(40,80,160,.25) inset; text-shadow: 0 2px 6px rgba(0,0,0,.4); }
        .avatar { width: 56px; height: 56px; flex: none; border-radius: 50%; opacity: .85;
          background: conic-gradient(red, orange, yellow, green, blue, violet, red); filter: drop-shadow(0 4px 8px rgba(0,0,0,.6)); }
        .bubble img { display: block; width: 100%; height: 320px; object-fit: cover; margin-top: 8px; border-radius: 14px;
          filter: blur(10px) saturate(1.4); box-shadow: 0 20px 90px rgba(0,0,0,.6); }
        """

    private static let heavyScript = """
        function makeImage(seed) {
          const canvas = document.createElement('canvas'); canvas.width = 1200; canvas.height = 700;
          const g = canvas.getContext('2d');
          let s = seed * 9301 + 49297; const r = () => ((s = (s * 9301 + 49297) % 233280) / 233280);
          for (let k = 0; k < 60; k++) {
            const gradient = g.createRadialGradient(r() * 1200, r() * 700, 0, r() * 1200, r() * 700, 50 + r() * 400);
            gradient.addColorStop(0, `hsla(${r() * 360},90%,60%,.9)`); gradient.addColorStop(1, `hsla(${r() * 360},90%,40%,0)`);
            g.fillStyle = gradient; g.fillRect(0, 0, 1200, 700);
          }
          for (let k = 0; k < 3000; k++) { g.fillStyle = `rgba(${r() * 255 | 0},${r() * 255 | 0},${r() * 255 | 0},.5)`; g.fillRect(r() * 1200, r() * 700, 3, 3); }
          return new Promise(resolve => canvas.toBlob(blob => resolve(URL.createObjectURL(blob)), 'image/jpeg', 0.92));
        }
        window.__ready = (async () => {
          const urls = [];
          for (let k = 0; k < 16; k++) urls.push(await makeImage(k + 1));
          const images = [...document.querySelectorAll('img[data-image]')];
          for (const image of images) image.src = urls[Number(image.dataset.image)];
          await Promise.all(images.slice(0, 40).map(image => image.decode().catch(() => 0)));
        })();
        """
}

/// `text` with `&`, `<`, `>`, `"` and `'` replaced by character references, scalar by scalar.
func escapeHTML(_ text: String) -> String {
    var out = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
        switch scalar {
        case "&": out.append(contentsOf: "&amp;".unicodeScalars)
        case "<": out.append(contentsOf: "&lt;".unicodeScalars)
        case ">": out.append(contentsOf: "&gt;".unicodeScalars)
        case "\"": out.append(contentsOf: "&quot;".unicodeScalars)
        case "'": out.append(contentsOf: "&#39;".unicodeScalars)
        default: out.append(scalar)
        }
    }
    return String(out)
}
