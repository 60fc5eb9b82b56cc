// Shows every pane of a go tool cover -html report for print, each after a
// heading with its file name (the option's text), and unfixes the top bar so
// it is not drawn over every page. See chromium_panes.go.
(() => {
  const sel = document.getElementById("files");
  if (!sel) return 0;
  let n = 0;
  for (const opt of Array.from(sel.options)) {
    const pane = document.getElementById(opt.value);
    if (!pane || !pane.classList.contains("file")) continue;
    const h = document.createElement("h2");
    h.className = "reportd-pane-title";
    h.textContent = opt.textContent;
    pane.before(h);
    pane.style.display = "block";
    n++;
  }
  const st = document.createElement("style");
  st.textContent =
    "#topbar{position:static!important;height:auto!important;overflow:hidden}" +
    "#nav{display:none!important}#content{margin-top:0!important}" +
    "pre.file{white-space:pre-wrap;overflow-wrap:anywhere}" +
    ".reportd-pane-title{color:#ddd;font:bold 14px monospace;margin:1.5em 0 .5em;" +
    "padding-top:.5em;border-top:1px solid #555;break-after:avoid}";
  document.head.appendChild(st);
  return n;
})()
