"""Babel's extraction method for the pages' HTML files (babel.cfg names it):
each {{t:English text}} is a message, as page_words.render translates it."""

from __future__ import annotations

import re
from typing import IO, Any, Iterator

MARKED = re.compile(r"\{\{t:(.+?)\}\}", re.S)


def extract(fileobj: IO[bytes], keywords: Any, comment_tags: Any, options: Any) -> Iterator[tuple]:
    """(line, funcname, message, comments) for each marked text."""
    text = fileobj.read().decode(options.get("encoding", "utf-8") if options else "utf-8")
    for m in MARKED.finditer(text):
        yield text.count("\n", 0, m.start()) + 1, None, " ".join(m.group(1).split()), []
