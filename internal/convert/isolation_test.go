package convert

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/convert/chromium"
	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testfixture"
)

// Attack documents from the red team's findings: each tries to leave work
// behind in the browser that reaches a later report's PDF.
var attackers = map[string]string{
	// A popup whose timer rewrites its opener, and reports whether it opened.
	"popup": `<p>ATTACKER popup</p><script>
const w = window.open('');
document.body.insertAdjacentHTML('beforeend', w ? '<p>POPUP-OPENED</p>' : '<p>POPUP-BLOCKED</p>');
if (w) w.document.write('<script>setInterval(() => { try { opener.document.body.innerHTML = "<p>INJECTED</p>" + opener.document.body.innerText; } catch (e) {} }, 1)<\/script>');
</script>`,
	// A timer of the document itself that never stops.
	"interval": `<p>ATTACKER interval</p><script>
setInterval(() => document.body.insertAdjacentHTML('beforeend', '<p>INJECTED</p>'), 1)</script>`,
	// An inline handler without whitespace before it, which the old
	// "inert" regex took for a page that runs no code.
	"svg": `<p>ATTACKER svg</p><svg/onload="setInterval(()=>document.body.insertAdjacentHTML('beforeend','<p>INJECTED</p>'),1)">`,
	// Storage and cookies for a later report of the same origin to find.
	"storage": `<p>ATTACKER storage</p><script>
localStorage.setItem('k', 'INJECTED'); document.cookie = 'k=INJECTED; max-age=9999';
</script>`,
}

// A victim that shows whatever storage it finds: a fresh context has none.
const victimScript = `<script>document.body.insertAdjacentHTML('beforeend',
'<p>' + (localStorage.getItem('k') || 'no-storage') + ' ' + (document.cookie || 'no-cookie') + '</p>')</script>`

func TestHTMLJobsAreIsolated(t *testing.T) {
	testfixture.NeedChromium(t)
	for name, attack := range attackers {
		t.Run(name, func(t *testing.T) {
			// One page at a time: every job runs in the same browser.
			m := newManager(t, func(c *Config) { c.ChromiumTabs = 1 })
			text := testfixture.PDFText(t, convertOK(t, m, jobFor(t, report.HTML, []byte(attack))))
			testfixture.WantText(t, text, "ATTACKER "+name)
			if name == "popup" {
				testfixture.WantText(t, text, "POPUP-BLOCKED")
			}
			for i := range 4 {
				own := fmt.Sprintf("victim number %d", i)
				doc := "<p>" + own + "</p>"
				if i%2 == 1 {
					doc += victimScript
				}
				text := testfixture.PDFText(t, convertOK(t, m, jobFor(t, report.HTML, []byte(doc))))
				testfixture.WantText(t, text, own)
				for _, bad := range []string{"INJECTED", "ATTACKER", "victim number"} {
					if strings.Count(text, bad) != strings.Count(own, bad) {
						t.Errorf("victim %d's PDF holds %q from another job:\n%s", i, bad, text)
					}
				}
			}
		})
	}
}

// TestMarkdownRunsNoScript: the engine itself runs no script for Markdown
// output, whatever HTML reaches it.
func TestMarkdownRunsNoScript(t *testing.T) {
	testfixture.NeedChromium(t)
	m := sharedManager(t)
	doc := `<p>static part</p><script>document.write('RAN-' + 'BY-SCRIPT')</script>
<img src="x" onerror="document.body.append('RAN-' + 'BY-HANDLER')">`
	var out bytes.Buffer
	if err := m.chrome.Print(testfixture.Ctx(t), []byte(doc), chromium.MarkdownOpts("A4"), &out); err != nil {
		t.Fatal(err)
	}
	text := testfixture.PDFText(t, out.Bytes())
	testfixture.WantText(t, text, "static part")
	if strings.Contains(text, "RAN-BY") {
		t.Errorf("script ran in a no-script print:\n%s", text)
	}
}

// TestHTMLWebRTCSendsNoUDP: STUN goes over UDP, which request interception
// never sees; even with AllowNetwork no packet may leave.
func TestHTMLWebRTCSendsNoUDP(t *testing.T) {
	testfixture.NeedChromium(t)
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	got := make(chan int, 1)
	go func() {
		n := 0
		buf := make([]byte, 2048)
		for {
			if _, _, err := conn.ReadFrom(buf); err != nil {
				got <- n
				return
			}
			n++
		}
	}()
	port := conn.LocalAddr().(*net.UDPAddr).Port
	doc := fmt.Sprintf(`<p>webrtc</p><script>
const pc = new RTCPeerConnection({iceServers: [{urls: 'stun:127.0.0.1:%[1]d'}, {urls: 'turn:127.0.0.1:%[1]d', username: 'u', credential: 'p'}]});
pc.createDataChannel('x');
pc.onicecandidate = (e) => { if (e.candidate) document.body.insertAdjacentHTML('beforeend', '<p>CANDIDATE ' + e.candidate.type + '</p>'); };
pc.createOffer().then((o) => pc.setLocalDescription(o));
setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<p>gathered</p>'), 1500);
</script>`, port)
	m := newManager(t, func(c *Config) { c.AllowNetwork = true; c.ChromiumTabs = 1 })
	text := testfixture.PDFText(t, convertOK(t, m, jobFor(t, report.HTML, []byte(doc))))
	testfixture.WantText(t, text, "webrtc", "gathered")
	conn.Close()
	if n := <-got; n != 0 {
		t.Errorf("the page sent %d UDP packets to a loopback STUN/TURN server; want 0\n%s", n, text)
	}
	if strings.Contains(text, "CANDIDATE srflx") || strings.Contains(text, "CANDIDATE relay") {
		t.Errorf("the page got a server-reflexive or relay candidate:\n%s", text)
	}
}

// TestChromiumHasNoNetwork: without AllowNetwork every process of the
// browser lives in a network namespace of its own (no loopback of the
// host's), beside the request interception that TestHTMLNetworkBlockedByDefault covers.
func TestChromiumHasNoNetwork(t *testing.T) {
	testfixture.NeedChromium(t)
	needSandbox(t)
	m := newManager(t, func(c *Config) { c.ChromiumTabs = 1 })
	convertOK(t, m, jobFor(t, report.HTML, []byte("<p>x</p>")))
	cur, _ := m.chrome.Supervisor().Current()
	root := cur.RootPID()
	self, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	browsers := 0
	for _, pid := range engine.DescendantsOf(root) {
		cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if !bytes.Contains(cmd, []byte("chrom")) || bytes.HasPrefix(cmd, []byte(m.chrome.Sandbox().Path())) {
			continue
		}
		browsers++
		if ns, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/net"); ns == self {
			t.Errorf("Chromium process %d shares the daemon's network namespace", pid)
		}
	}
	if browsers == 0 {
		t.Fatalf("no Chromium process under bwrap %d", root)
	}
}

// TestHTMLCannotReadFiles: the document, written into its page in place,
// has its page's http origin, never file://.
func TestHTMLCannotReadFiles(t *testing.T) {
	testfixture.NeedChromium(t)
	secret := t.TempDir() + "/secret.txt"
	if err := os.WriteFile(secret, []byte("TOP-SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := fmt.Sprintf(`<p>local</p><iframe src="file://%[1]s"></iframe><script>
fetch("file://%[1]s").then(r => r.text()).then(t => document.body.append(t), () => document.body.append("fetch-refused"));
</script>`, secret)
	text := testfixture.PDFText(t, convertOK(t, sharedManager(t), jobFor(t, report.HTML, []byte(doc))))
	testfixture.WantText(t, text, "local", "fetch-refused")
	if strings.Contains(text, "TOP-SECRET") {
		t.Error("a report read a local file")
	}
}
