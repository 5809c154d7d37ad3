"""A real SMTP server for tests/notify.rs: aiosmtpd on 127.0.0.1, port chosen by the
kernel (printed on the first line of stdout), every mail it takes written whole to
DIR/<n>.eml (first to a temporary name, then renamed, so a reader never sees half).
Runs until its standard input closes, which happens when the test ends."""

import asyncio
import os
import sys

from aiosmtpd.smtp import SMTP


class Sink:
    def __init__(self, folder):
        self.folder = folder
        self.count = 0

    async def handle_DATA(self, server, session, envelope):
        self.count += 1
        path = os.path.join(self.folder, f"{self.count}.eml")
        with open(path + ".part", "wb") as f:
            f.write(b"X-Rcpt-To: " + ", ".join(envelope.rcpt_tos).encode() + b"\r\n")
            f.write(envelope.original_content or envelope.content)
        os.rename(path + ".part", path)
        return "250 OK"


async def main(folder):
    loop = asyncio.get_running_loop()
    handler = Sink(folder)
    server = await loop.create_server(lambda: SMTP(handler), "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    # Ends when the test's end closes our standard input.
    await loop.run_in_executor(None, sys.stdin.read)
    server.close()


asyncio.run(main(sys.argv[1]))
