import Foundation
import FramescopeCore
import FramescopeScroll

extension ScrollRamp {
    /// The element a selector names, as JavaScript: the selector's element, else the
    /// page's element marked `data-framescope-scroll`, else the document's scroller.
    static func element(selector: String?) -> String {
        let quoted = selector.map(quote) ?? "null"
        return "(\(quoted) ? document.querySelector(\(quoted)) : (document.querySelector('[data-framescope-scroll]') || document.scrollingElement))"
    }

    /// JavaScript that answers `{error}` when there is no element to scroll, else `{height}`.
    static func targetCheck(selector: String?) -> String {
        """
        (() => { const el = \(element(selector: selector));
          if (!el) return {error: \(quote("no element matches the selector \(selector ?? "")"))};
          return {height: el.scrollHeight - el.clientHeight}; })()
        """
    }

    /// JavaScript that scrolls the element by this script on the page's animation frames
    /// (the offset at each frame's time, from ``offset(at:)``'s formula), marks the start
    /// and end with `performance.mark`, and answers `{scrolled, frames}`.
    func javaScript(selector: String?) -> String {
        """
        (async () => {
          const el = \(Self.element(selector: selector));
          const v0 = \(startVelocity), v1 = \(endVelocity), T = \(duration);
          const start = el.scrollTop;
          performance.mark('framescope.scroll.start');
          const t0 = await new Promise(resolve => requestAnimationFrame(resolve));
          let frames = 0;
          await new Promise(resolve => {
            function step(now) {
              const t = Math.min(Math.max((now - t0) / 1000, 0), T);
              el.scrollTop = start + v0 * t + (v1 - v0) * t * t / (2 * T);
              frames++;
              if (t < T) requestAnimationFrame(step); else resolve();
            }
            requestAnimationFrame(step);
          });
          performance.mark('framescope.scroll.end');
          return {scrolled: el.scrollTop - start, frames: frames};
        })()
        """
    }

    /// `text` as a JavaScript string literal (JSON's).
    private static func quote(_ text: String) -> String {
        (try? String(decoding: JSONEncoder().encode(text), as: UTF8.self)) ?? "''"
    }
}
