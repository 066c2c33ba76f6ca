"""Reading an upload's multipart body as it streams in, with the size limit on each file.

The upload addresses (a chat attachment, a knowledge-base document, an evaluation set in
BEIR's files) read their body here. A file part is counted as it arrives and the upload
is refused with 413 the moment it passes its limit: nothing is spooled to disk through the shared thread
pool first (the default executor that the dedicated blocking pool exists to spare),
and nothing past the limit is kept. (``BodySizeLimit`` in app.py caps the whole body
before this runs.)
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from docproc_common.errors import FieldError, InvalidInput, PayloadTooLarge
from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header

MAX_FIELD_BYTES = 4096
MAX_PARTS = 16


#: The one file part of a document or chat upload.
FILE = "file"


@dataclass(frozen=True, slots=True)
class FilePart:
    filename: str
    content_type: str | None
    data: bytes


@dataclass
class UploadForm:
    #: Each file part by its name (every one the route asked for).
    files: dict[str, FilePart] = field(default_factory=dict)
    fields: dict[str, str] = field(default_factory=dict)

    @property
    def filename(self) -> str:
        return self.files[FILE].filename

    @property
    def content_type(self) -> str | None:
        return self.files[FILE].content_type

    @property
    def data(self) -> bytes:
        return self.files[FILE].data

    @property
    def organizational_unit(self) -> str | None:
        return self.fields.get("organizational_unit")


@dataclass
class _Part:
    headers: dict[bytes, bytes] = field(default_factory=dict)
    name: str | None = None
    filename: str | None = None
    content_type: str | None = None
    chunks: list[bytes] = field(default_factory=list)
    size: int = 0


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


class _Collector:
    def __init__(
        self,
        max_file_bytes: int,
        too_large: str,
        text_fields: frozenset[str],
        file_fields: frozenset[str],
    ) -> None:
        self.max_file_bytes = max_file_bytes
        self.too_large = too_large
        self.text_fields = text_fields
        self.file_fields = file_fields
        self.form = UploadForm()
        self.part = _Part()
        self.parts = 0
        self._field = b""
        self._value = b""

    # python-multipart callbacks
    def on_part_begin(self) -> None:
        self.parts += 1
        if self.parts > MAX_PARTS:
            raise InvalidInput("The upload has too many form fields")
        self.part = _Part()

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self._field += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self._value += data[start:end]

    def on_header_end(self) -> None:
        self.part.headers[self._field.strip().lower()] = self._value.strip()
        self._field = self._value = b""

    def on_headers_finished(self) -> None:
        disposition, options = parse_options_header(
            self.part.headers.get(b"content-disposition", b"")
        )
        if disposition != b"form-data" or b"name" not in options:
            raise InvalidInput("A form part has no name")
        self.part.name = _decode(options[b"name"])
        if b"filename" in options:
            self.part.filename = _decode(options[b"filename"])
        content_type = self.part.headers.get(b"content-type")
        if content_type is not None:
            self.part.content_type = _decode(content_type)

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        part = self.part
        part.size += end - start
        if part.name in self.file_fields:
            if part.size > self.max_file_bytes:
                raise PayloadTooLarge(
                    self.too_large,
                    fields=[FieldError(part.name, "too large")],
                    details={"rule": "too_large"},
                )
        elif part.size > MAX_FIELD_BYTES:
            raise InvalidInput(
                f"The form field {part.name!r} is too long",
                fields=[FieldError(part.name or "form", "too long")],
            )
        elif part.name not in self.text_fields:
            return  # an unknown field: read past it, keep nothing
        part.chunks.append(data[start:end])

    def on_part_end(self) -> None:
        part = self.part
        if part.name in self.file_fields:
            if part.name in self.form.files:
                raise InvalidInput(
                    f"Send one file in the part {part.name!r}",
                    fields=[FieldError(part.name, "more than one file")],
                )
            if part.filename is None:
                raise InvalidInput(
                    f"The part {part.name!r} has no file name",
                    fields=[FieldError(part.name, "not a file")],
                )
            self.form.files[part.name] = FilePart(
                part.filename, part.content_type, b"".join(part.chunks)
            )
        elif part.name in self.text_fields:
            value = _decode(b"".join(part.chunks))
            if "\x00" in value:  # never meant, and PostgreSQL refuses it in any text
                raise InvalidInput(
                    f"The form field {part.name!r} contains a NUL character",
                    fields=[FieldError(part.name, "contains a NUL character")],
                )
            self.form.fields[part.name] = value


async def read_upload_form(
    content_type: str | None,
    stream: AsyncIterator[bytes],
    max_file_bytes: int,
    *,
    too_large: str,
    text_fields: frozenset[str],
    file_fields: tuple[str, ...] = (FILE,),
) -> UploadForm:
    """The file parts ``file_fields`` (bytes, name, declared type; each required, each at
    most ``max_file_bytes``) and the named text fields."""
    mime, options = parse_options_header((content_type or "").encode("latin-1", "replace"))
    boundary = options.get(b"boundary")
    if mime != b"multipart/form-data" or not boundary:
        named = " and ".join(repr(f) for f in file_fields)
        raise InvalidInput(
            f"Send the file as multipart/form-data in a part named {named}",
            fields=[FieldError(f, "required") for f in file_fields],
        )
    collector = _Collector(max_file_bytes, too_large, text_fields, frozenset(file_fields))
    parser = MultipartParser(
        boundary,
        {
            "on_part_begin": collector.on_part_begin,
            "on_header_field": collector.on_header_field,
            "on_header_value": collector.on_header_value,
            "on_header_end": collector.on_header_end,
            "on_headers_finished": collector.on_headers_finished,
            "on_part_data": collector.on_part_data,
            "on_part_end": collector.on_part_end,
        },
    )
    try:
        async for chunk in stream:
            if chunk:
                parser.write(chunk)
        parser.finalize()
    except MultipartParseError as exc:
        raise InvalidInput("The multipart body is malformed") from exc
    missing = [f for f in file_fields if f not in collector.form.files]
    if missing:
        named = " and ".join(repr(f) for f in missing)
        raise InvalidInput(
            f"Send the file in a multipart part named {named}",
            fields=[FieldError(f, "required") for f in missing],
        )
    return collector.form


def multipart_openapi(
    text_fields: dict[str, dict[str, object]],
    *,
    file_fields: dict[str, str] | None = None,
    required: tuple[str, ...] = (),
) -> dict[str, object]:
    """The OpenAPI request body of an upload read by ``read_upload_form``: each file part of
    ``file_fields`` (name -> an example file name; ``file`` by default) and the text fields,
    the files and ``required`` required."""
    files = file_fields or {FILE: "notes.md"}
    return {
        "requestBody": {
            "required": True,
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "required": [*files, *required],
                        "properties": {
                            **{f: {"type": "string", "format": "binary"} for f in files},
                            **text_fields,
                        },
                    },
                    "encoding": {
                        f: {
                            "headers": {
                                "Content-Disposition": {
                                    "description": "The file part names its file",
                                    "schema": {"type": "string"},
                                    "example": f'form-data; name="{f}"; filename="{example}"',
                                }
                            }
                        }
                        for f, example in files.items()
                    },
                }
            },
        }
    }
