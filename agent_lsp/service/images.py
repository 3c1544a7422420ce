"""The images of a user's message, from either face to the session's files.

A message's content may hold image blocks as the faces take them:
`{"type": "image", "data": <base64>, "mediaType"?, "name"?}`,
`{"type": "image", "uri": <file URI or path inside the workspace>, "name"?}`, or
`{"type": "image", "file": <name>, "name"?}`, an image the session already keeps
(a client sending a message of the transcript again gives back its reference).
`read` checks each one (decoded, its media type known from its bytes, the size
limit; `llm/images.py`) before anything is queued; `stored` writes the bytes
once beside the session log (`store/files.py`) and leaves in the message a
text placeholder an older reader shows and the reference
`{"type": "image", "mediaType", "file", "name"?, "size"}`. A model known not
to take images is refused before the message is queued (`refuse_model`).
Every problem is an `ImageProblem` naming the file, which each face answers
as invalid params."""

from __future__ import annotations

import base64
import binascii
from dataclasses import replace
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from agent_lsp.llm.images import MEDIA_TYPES, ImageProblem, checked, refusal, size_text, takes_images
from agent_lsp.service.messages import Message
from agent_lsp.store import files
from agent_lsp.tools.paths import OutsideWorkspaceError, WorkspaceRoots

if TYPE_CHECKING:
    from agent_lsp.agent import Agent
    from agent_lsp.workspace.host import WorkspaceHost

__all__ = ["ImageProblem", "has_images", "read", "refuse_model", "stored"]


def has_images(message: Message) -> bool:
    return not isinstance(message.content, str) and any(b.get("type") == "image" for b in message.content)


def read(message: Message, host: WorkspaceHost) -> Message:
    """The message with each image block checked and holding its bytes (base64) and media type."""
    if not has_images(message):
        return message
    assert not isinstance(message.content, str)
    return replace(message, content=[_read(b, host, i) if b.get("type") == "image" else b
                                     for i, b in enumerate(message.content)])


def _read(block: dict[str, Any], host: WorkspaceHost, index: int) -> dict[str, Any]:
    name = block.get("name") if isinstance(block.get("name"), str) and block.get("name") else None
    declared = block.get("mediaType") if isinstance(block.get("mediaType"), str) else None
    if isinstance(block.get("file"), str) and not isinstance(block.get("data"), str):
        # one the session keeps: read from its folder once the session is known (`stored`)
        return {"type": "image", "file": block["file"], **({"name": PurePath(name).name} if name else {})}
    if isinstance(block.get("data"), str):
        try:
            data = base64.b64decode(block["data"], validate=True)
        except (binascii.Error, ValueError):
            raise ImageProblem(f"the image {name or index + 1}: its data is not base64") from None
    elif isinstance(block.get("uri"), str):
        try:
            path = WorkspaceRoots([host.root]).resolve(block["uri"])
        except OutsideWorkspaceError:
            raise ImageProblem(f"the image {block['uri']} is not a file inside the workspace") from None
        name = name or path.name
        try:
            data = path.read_bytes()
        except OSError as error:
            raise ImageProblem(f"the image {name} cannot be read: {error.strerror or error}") from None
    else:
        raise ImageProblem(f"image {index + 1}: give its data (base64) or a uri")
    media_type = checked(data, name or f"image {index + 1}", declared)
    out = {"type": "image", "mediaType": media_type, "data": base64.b64encode(data).decode("ascii"), "size": len(data)}
    if name:
        out["name"] = PurePath(name).name
    return out


def refuse_model(message: Message, host: WorkspaceHost, agent: Agent) -> None:
    """ImageProblem when the message holds images and the session's model is known not to
    take them: the `model.images` setting, the known text-only models, or (with "auto") an
    earlier turn of this session that the endpoint refused for its images."""
    if not has_images(message):
        return
    model, setting = agent.options.model, host.settings.model.images
    if not takes_images(model, setting) or (setting == "auto" and _endpoint_refused(agent, model)):
        raise ImageProblem(refusal(model))


def _endpoint_refused(agent: Agent, model: str) -> bool:
    """A turn of the session ended in a bad request of `model` that speaks of images
    (the endpoint's answer, remembered in the log)."""
    for event in agent.session.events.held(reverse=True):
        if event.type != "turn/end":
            continue
        error = (event.data.get("reason") or {}).get("error") or {}
        if (error.get("code") == "BAD_REQUEST" and error.get("model") == model
                and "image" in str(error.get("message") or "").lower()):
            return True
    return False


def stored(message: Message, agent: Agent) -> Message:
    """The message with its images written beside the session log and referred to."""
    if not has_images(message):
        return message
    folder = agent.session.files
    if folder is None:
        raise ImageProblem("this session is not stored on disk, so it cannot keep images")
    content: list[dict[str, Any]] = []
    assert not isinstance(message.content, str)
    for block in message.content:
        if block.get("type") != "image" or ("data" not in block and "file" not in block):
            content.append(block)
            continue
        if "data" in block:
            data, media_type = base64.b64decode(block["data"]), block["mediaType"]
        else:
            data = _kept(folder, block["file"], block.get("name"))
            media_type = checked(data, block.get("name") or block["file"])
            if content and content[-1].get("type") == "text" and str(content[-1].get("text")).startswith("[image: "):
                content.pop()  # the placeholder of the message sent again: written afresh below
        reference = {"type": "image", "mediaType": media_type,
                     "file": files.put(folder, data, MEDIA_TYPES[media_type]), "size": len(data)}
        label = media_type
        if block.get("name"):
            reference["name"] = block["name"]
            label = f"{block['name']}, {media_type}"
        content.append({"type": "text", "text": f"[image: {label}, {size_text(len(data))}]"})
        content.append(reference)
    return replace(message, content=content)


def _kept(folder: Any, file: str, name: str | None) -> bytes:
    try:
        return files.read(folder, file)
    except OSError:
        raise ImageProblem(f"the image {name or file} is not one this session keeps") from None
