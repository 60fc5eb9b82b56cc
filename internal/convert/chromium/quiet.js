// Installed by reportd before any page script. It counts work a page still has
// to do soon - short timers, animation frames, fetches - so that printing can
// start as soon as a page is done drawing instead of after a fixed delay.
// window.__reportdSettle(ms) resolves when nothing is pending, or after ms.
(() => {
  if (window.__reportdSettle) return;
  const SHORT = 2000; // timers longer than this are not waited for
  const oST = window.setTimeout.bind(window);
  const oCT = window.clearTimeout.bind(window);
  const oRAF = window.requestAnimationFrame.bind(window);
  const oCAF = window.cancelAnimationFrame.bind(window);
  const timers = new Set();
  const frames = new Set();
  let fetches = 0;

  window.setTimeout = function (fn, delay, ...args) {
    if (typeof fn !== 'function' || Number(delay) > SHORT) return oST(fn, delay, ...args);
    const id = oST(function () { timers.delete(id); return fn.apply(this, args); }, delay);
    timers.add(id);
    return id;
  };
  window.clearTimeout = function (id) { timers.delete(id); return oCT(id); };
  window.requestAnimationFrame = function (fn) {
    const id = oRAF(function (ts) { frames.delete(id); return fn(ts); });
    frames.add(id);
    return id;
  };
  window.cancelAnimationFrame = function (id) { frames.delete(id); return oCAF(id); };
  if (window.fetch) {
    const oFetch = window.fetch;
    window.fetch = function (...a) {
      fetches++;
      const done = () => { fetches--; };
      const p = oFetch.apply(this, a);
      p.then(done, done);
      return p;
    };
  }
  const oSend = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...a) {
    fetches++;
    this.addEventListener('loadend', () => { fetches--; }, { once: true });
    return oSend.apply(this, a);
  };

  window.__reportdSettle = (budget) => new Promise((resolve) => {
    const end = performance.now() + budget;
    const idle = () => timers.size === 0 && frames.size === 0 && fetches <= 0;
    const check = () => {
      if (idle() || performance.now() >= end) resolve(true);
      else oST(check, 5);
    };
    const fonts = document.fonts ? document.fonts.ready : Promise.resolve();
    Promise.race([fonts, new Promise((r) => oST(r, budget))]).then(check, check);
  });
})();
