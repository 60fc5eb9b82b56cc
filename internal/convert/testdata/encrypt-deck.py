# Writes deck-encrypted.pptx: deck.pptx saved by LibreOffice with the
# password "secret" (ECMA-376 Standard encryption: an OLE2 file holding
# EncryptionInfo and EncryptedPackage). Run by make-fixtures.sh with
# Debian's python3 (python3-uno): encrypt-deck.py PROFILE_DIR.
import os
import subprocess
import sys
import time

import uno
from com.sun.star.beans import NamedValue, PropertyValue


def pv(name, value):
    return uno.createUnoStruct("com.sun.star.beans.PropertyValue", name, 0, value, 0)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    pipe = "encrypt-deck-%d" % os.getpid()
    proc = subprocess.Popen(
        ["soffice", "--headless", "--invisible", "--norestore", "--nologo",
         "-env:UserInstallation=file://" + sys.argv[1],
         "--accept=pipe,name=%s;urp;StarOffice.ComponentContext" % pipe],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        local = uno.getComponentContext()
        resolver = local.ServiceManager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
        ctx = None
        for _ in range(600):
            try:
                ctx = resolver.resolve("uno:pipe,name=%s;urp;StarOffice.ComponentContext" % pipe)
                break
            except Exception:
                time.sleep(0.1)
        desktop = ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
        doc = desktop.loadComponentFromURL(
            uno.systemPathToFileUrl(os.path.join(here, "deck.pptx")), "_blank", 0, (pv("Hidden", True),))
        enc = uno.Any("[]com.sun.star.beans.NamedValue",
                      (NamedValue("OOXPassword", "secret"), NamedValue("CryptoType", "Standard")))
        doc.storeToURL(uno.systemPathToFileUrl(os.path.join(here, "deck-encrypted.pptx")),
                       (pv("FilterName", "Impress MS PowerPoint 2007 XML"), pv("EncryptionData", enc)))
        doc.close(True)
    finally:
        proc.terminate()


if __name__ == "__main__":
    main()
