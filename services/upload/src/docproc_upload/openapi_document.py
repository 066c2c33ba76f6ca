"""The upload app's OpenAPI document, as ``/openapi.json`` serves it, built without a server.

``python -m docproc_upload.openapi_document`` prints it: ``make clients`` writes it to
``clients/typescript/openapi.json`` and generates both clients from it, the Python
package's ``docproc_client.generated`` and the TypeScript types the console and
``@docproc/client`` are typed by (``clients/typescript/src/api.d.ts``);
``tests/clients/test_generated.py`` fails while the committed clients are not this
document's.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from docproc_common.runtime import Runtime, build_app
from docproc_common.settings import DatabaseSettings, Settings

from docproc_upload.app import build


async def openapi_document() -> dict[str, Any]:
    # building the app opens no connection; the URL only has to parse
    settings = Settings(database=DatabaseSettings(url="postgresql+asyncpg://u:p@127.0.0.1:1/db"))
    runtime = Runtime.create(settings)
    try:
        spec = build(runtime)
        try:
            return build_app(runtime, [spec], [], "docproc").openapi()
        finally:
            for close in spec.on_shutdown:
                await close()
    finally:
        await runtime.close()


def main() -> None:
    json.dump(asyncio.run(openapi_document()), sys.stdout)


if __name__ == "__main__":
    main()
