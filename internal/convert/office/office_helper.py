# reportd office helper: keeps one LibreOffice warm and converts documents to PDF.
#
# Runs on Debian's /usr/bin/python3 (the one with python3-uno). reportd starts
# it in its own process group with: helper.py SOFFICE PROFILE_URL PIPE_NAME
# [DATA_LIMIT]: soffice's heap is capped at DATA_LIMIT bytes (0: no cap).
# It starts soffice as its child (same group, so one kill ends both), connects
# over a named UNO pipe, prints one JSON line {"ready":true,"pid":N}, then reads
# one JSON job per stdin line {"in":PATH,"out":PATH,"filter":NAME,"detect":BOOL,
# "service":NAME,"export":NAME} (filter: the import filter; service: the
# document service the file must load as; export: the PDF export filter, all
# from reportd's type table; detect: if the filter cannot load the file, use
# the filter LibreOffice's type detection picks if it makes that service)
# and answers each with one JSON line
# {"ok":true} or {"ok":false,"error":TEXT} ("encrypted":true when LibreOffice
# said the file is password-protected); when
# soffice died during the job the answer has "died":true, its exit "status" and
# "peak" resident bytes, and the helper exits.
import ctypes
import json
import os
import resource
import signal
import subprocess
import sys
import time

import uno
from com.sun.star.beans import PropertyValue


def props(**kw):
    out = []
    for k, v in kw.items():
        p = PropertyValue()
        p.Name = k
        p.Value = v
        out.append(p)
    return tuple(out)


def reply(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def start_hook(data_limit):
    def hook():
        # soffice must not outlive this helper when reportd kills it or dies.
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        # RLIMIT_DATA, not RLIMIT_AS: soffice reserves ~0.5 GB of address
        # space it never touches, while the data segment (heap and private
        # mappings) is what a huge picture or a bomb deck really grows.
        if data_limit > 0:
            resource.setrlimit(resource.RLIMIT_DATA, (data_limit, data_limit))
    return hook


def main():
    soffice, profile_url, pipe = sys.argv[1], sys.argv[2], sys.argv[3]
    data_limit = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    proc = subprocess.Popen(
        [soffice, "--headless", "--invisible", "--nologo", "--norestore",
         "--nodefault", "--nolockcheck", "--nofirststartwizard",
         "-env:UserInstallation=" + profile_url,
         "--accept=pipe,name=%s;urp;StarOffice.ComponentContext" % pipe],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        preexec_fn=start_hook(data_limit))
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext(
        "com.sun.star.bridge.UnoUrlResolver", local)
    url = "uno:pipe,name=%s;urp;StarOffice.ComponentContext" % pipe
    ctx = None
    # The first start creates the profile, which takes a few seconds; reportd
    # bounds the whole start-up with its own timeout.
    while ctx is None:
        if proc.poll() is not None:
            reply({"ready": False, "error": "soffice exited with status %d" % proc.returncode})
            return 1
        try:
            ctx = resolver.resolve(url)
        except Exception:
            time.sleep(0.05)
    smgr = ctx.ServiceManager
    reply({"ready": True, "pid": proc.pid})

    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        doc = None
        try:
            job = json.loads(line)
            service = job.get("service") or PRESENTATION
            t0 = time.monotonic()
            # Never run macros, never fetch linked content: decks are user uploads.
            load = props(Hidden=True, ReadOnly=True, FilterName=job["filter"],
                         MacroExecutionMode=0, UpdateDocMode=0)
            url = uno.systemPathToFileUrl(job["in"])
            try:
                doc = load_into_model(smgr, ctx, service, load + props(URL=url))
            except Exception as e:
                if encrypted(e) or not job.get("detect"):
                    raise
                # Not what the filter expects (a PowerPoint 95 or 4.0 file
                # is OLE2 too): let LibreOffice's type detection name the
                # filter, and take it only if it makes a presentation.
                close(doc)
                doc = None
                other = detected_filter(smgr, ctx, service, url)
                if other is None or other == job["filter"]:
                    raise
                doc = load_into_model(smgr, ctx, service, props(
                    Hidden=True, ReadOnly=True, FilterName=other,
                    MacroExecutionMode=0, UpdateDocMode=0, URL=url))
            if not doc.supportsService(service):
                raise RuntimeError("the file is not a %s" % KINDS.get(service, "document of its type"))
            t1 = time.monotonic()
            doc.storeToURL(uno.systemPathToFileUrl(job["out"]), props(FilterName=job.get("export") or "impress_pdf_Export"))
            # Answer first, then close: the PDF is complete, and the caller
            # need not wait for the teardown (the next job on this worker does).
            reply({"ok": True, "load_ms": round((t1 - t0) * 1000, 1),
                   "store_ms": round((time.monotonic() - t1) * 1000, 1)})
        except Exception as e:  # a UNO exception's message is the useful part
            msg = getattr(e, "Message", "") or str(e) or type(e).__name__
            msg = msg.strip().splitlines()[0] if msg.strip() else type(e).__name__
            # Tear the failed document down before answering: a soffice
            # that ran out of memory (the data limit) may crash doing so,
            # and then the next job must not be the one to find out.
            close(doc)
            doc = None
            if encrypted(e):
                reply({"ok": False, "encrypted": True, "error": msg})
                continue
            if not healthy(proc, smgr, ctx):
                # The peak resident memory of reaped descendants (soffice.bin,
                # reaped by its launcher): gone from /proc, kept by the kernel.
                # Reap the launcher first, so its figures are counted.
                try:
                    status = proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    status = None
                peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
                reply({"ok": False, "died": True, "status": status, "peak": peak, "error": msg})
                return 1  # reportd replaces this worker
            reply({"ok": False, "error": msg})
        finally:
            close(doc)
    proc.terminate()
    return 0


PRESENTATION = "com.sun.star.presentation.PresentationDocument"

# What a file that did not load as its service is not, for the error.
KINDS = {PRESENTATION: "presentation", "com.sun.star.text.TextDocument": "text document"}


def load_into_model(smgr, ctx, service, media):
    # A presentation loads into a bare document model: no frame, view or
    # controller (which loadComponentFromURL builds even when hidden). Its
    # PDF export renders from the model alone; this saves ~25 ms a deck.
    # Other services (Writer) lay their pages out in a view: the desktop
    # loads them, hidden, with the same filter and media descriptor.
    if service != PRESENTATION:
        desktop = smgr.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
        url = [p.Value for p in media if p.Name == "URL"][0]
        doc = desktop.loadComponentFromURL(url, "_blank", 0, tuple(p for p in media if p.Name != "URL"))
        if doc is None:
            raise RuntimeError("LibreOffice could not load the %s" % KINDS.get(service, "document"))
        return doc
    doc = smgr.createInstanceWithContext(service, ctx)
    if doc is None:
        raise RuntimeError("LibreOffice could not create a %s (is its module installed?)" % KINDS.get(service, service))
    try:
        doc.load(media)
    except Exception:
        close(doc)
        raise
    return doc


def detected_filter(smgr, ctx, service, url):
    # The import filter LibreOffice's own (deep) type detection picks for
    # the file, if that filter makes a document of service; else None. A
    # Word or Excel OLE2 file named .ppt is thus still refused.
    try:
        td = smgr.createInstanceWithContext("com.sun.star.document.TypeDetection", ctx)
        typ, _ = td.queryTypeByDescriptor(props(URL=url), True)
        if not typ:
            return None
        name = {p.Name: p.Value for p in td.getByName(typ)}.get("PreferredFilter")
        if not name:
            return None
        ff = smgr.createInstanceWithContext("com.sun.star.document.FilterFactory", ctx)
        f = {p.Name: p.Value for p in ff.getByName(name)}
        if f.get("DocumentService") != service:
            return None
        if not int(f.get("Flags", 0)) & 1:  # an import filter (SfxFilterFlags::IMPORT)
            return None
        return name
    except Exception:
        return None


# LibreOffice's load errors (ErrCode: area << 13 | class << 8 | code) that
# say the file is encrypted: ERRCODE_SVX_READ_FILTER_PPOINT ("password
# encrypted PowerPoint documents cannot be read", the binary .ppt import's
# answer to an encrypted deck) and ERRCODE_SVX_WRONGPASS.
ENCRYPTED_ERRCODES = {(8 << 13) | (11 << 8) | 17, (8 << 13) | 15}


def encrypted(e):
    return getattr(e, "ErrCode", None) in ENCRYPTED_ERRCODES


def close(doc):
    if doc is None:
        return
    try:
        doc.close(True)
    except Exception:
        try:
            doc.dispose()
        except Exception:
            pass


def healthy(proc, smgr, ctx):
    # A dead soffice shows as a disposed UNO bridge; probe it with a call.
    if proc.poll() is not None:
        return False
    try:
        smgr.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
    except Exception:
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())
