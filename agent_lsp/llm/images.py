"""Images a user sends with a message: the media types the models take, known
from the bytes (magic numbers, never the file name), the size limit checked
before anything is sent, and whether a model takes images at all.

The providers (`openai.py`, `anthropic.py`) send an image block
`{"type": "image", "mediaType", "data"}` (base64) in their own shape; the
session log keeps a reference instead (`store/files.py`)."""

from __future__ import annotations

# What both provider formats take: PNG, JPEG, GIF and WebP.
MEDIA_TYPES = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}

# The smallest per-image limit of the providers (Anthropic's 5 MB per image, base64
# before encoding); OpenAI-compatible servers take at least this much.
MAX_IMAGE_BYTES = 5 * 1024 * 1024

# Model names (a part of the name, any case) known not to take images, for
# `model.images = "auto"`: text-only families of the providers' lists.
TEXT_ONLY_MODELS = ("gpt-3.5", "o1-mini", "o3-mini", "deepseek-chat", "deepseek-reasoner", "deepseek-coder",
                    "codestral", "claude-2", "claude-instant", "text-only")


class ImageProblem(ValueError):
    """An image that cannot be sent, in words the user can act on."""


def media_type_of(data: bytes) -> str | None:
    """The media type the bytes' header says, if one of MEDIA_TYPES."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def checked(data: bytes, name: str, declared: str | None = None) -> str:
    """The media type of an image the models may be sent, else ImageProblem naming `name`."""
    if not data:
        raise ImageProblem(f"{name} is empty, not an image")
    if len(data) > MAX_IMAGE_BYTES:
        raise ImageProblem(f"{name} is {size_text(len(data))}, over the limit of "
                           f"{size_text(MAX_IMAGE_BYTES)} per image; make it smaller (it is not downscaled)")
    found = media_type_of(data)
    if found is None:
        known = ", ".join(t.split("/")[1].upper() for t in MEDIA_TYPES)
        said = f" (declared {declared})" if declared else ""
        raise ImageProblem(f"{name}{said} is not an image the models take: its header is none of {known}")
    if declared and declared.lower() not in MEDIA_TYPES:
        raise ImageProblem(f"{name}: the media type {declared} is not one the models take "
                           f"({', '.join(MEDIA_TYPES)})")
    return found


def takes_images(model: str, setting: bool | str) -> bool:
    """Whether a turn may send images to `model`: the `model.images` setting, or for
    "auto" every model not known to be text-only (TEXT_ONLY_MODELS)."""
    if isinstance(setting, bool):
        return setting
    lowered = model.lower()
    return not any(part in lowered for part in TEXT_ONLY_MODELS)


def refusal(model: str) -> str:
    return f"the model {model} does not take images; choose another or remove the image"


def size_text(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.0f} KB"
    return f"{size / (1024 * 1024):.1f} MB"
