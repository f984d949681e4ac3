"""Builds a GenerateRequest from prompts and keyword fields, naming bad ones."""

import re
from typing import Any, Iterable, Union

from google.protobuf.descriptor import FieldDescriptor

from ditserve.stubs import generation_pb2


def build_request(
    prompts: Union[str, Iterable[str]], fields: dict
) -> generation_pb2.GenerateRequest:
    """A GenerateRequest of `prompts` (one string or several) and `fields`.

    `fields` are GenerateRequest fields by name (height=512, seed=1, ...);
    a field set to None is left out, so the server applies its default.
    `output_format` also takes a name: "png", "jpeg", "webp", "rgb8",
    "latent_f32", "mp4".

    Raises:
      ValueError, TypeError: a field that GenerateRequest does not have, or
        a value of the wrong type or range; the message names the field.
    """
    request = generation_pb2.GenerateRequest()
    if isinstance(prompts, (bytes, bytearray)):
        raise TypeError("prompt: pass text (str), not bytes; decode them first")
    try:
        # A lone string would otherwise become one prompt per character.
        request.prompt.extend(
            [prompts] if isinstance(prompts, str) else prompts)
    except (TypeError, ValueError) as error:
        raise _naming("prompt", error) from error
    by_name = generation_pb2.GenerateRequest.DESCRIPTOR.fields_by_name
    for name, value in fields.items():
        if name == "prompt":
            raise ValueError("prompt: pass the prompts as the first argument")
        field = by_name.get(name)
        if field is None:
            known = ", ".join(sorted(set(by_name) - {"prompt"}))
            raise ValueError(
                f"{name}: GenerateRequest has no such field; known: {known}"
            )
        if value is None:
            continue
        _set_field(request, field, value)
    return request


def _set_field(
    request: generation_pb2.GenerateRequest, field: FieldDescriptor, value: Any
) -> None:
    try:
        if field.label == FieldDescriptor.LABEL_REPEATED:
            getattr(request, field.name).extend(
                [value] if isinstance(value, str) else value
            )
        elif field.enum_type is not None and isinstance(value, str):
            setattr(request, field.name, _enum_number(field, value))
        else:
            setattr(request, field.name, value)
    except (TypeError, ValueError) as error:
        raise _naming(field.name, error) from error


def _naming(field_name: str, error: Exception) -> Exception:
    """`error` as a TypeError or ValueError whose message starts with the
    field's name; a subclass such as UnicodeEncodeError (text that is not
    valid Unicode) cannot be rebuilt from a message."""
    kind = TypeError if isinstance(error, TypeError) else ValueError
    return kind(f"{field_name}: {error}")


def _enum_number(field: FieldDescriptor, name: str) -> int:
    """The number of enum value `name`, in any case, with or without the
    prefix protobuf style gives it (output_format: "mp4" or
    "OUTPUT_FORMAT_MP4")."""
    prefix = re.sub(r"(?<!^)(?=[A-Z])", "_", field.enum_type.name).upper() + "_"
    values = field.enum_type.values_by_name
    wanted = name.upper()
    for candidate in (wanted, prefix + wanted):
        if candidate in values:
            return values[candidate].number
    choices = ", ".join(
        v.name.removeprefix(prefix).lower()
        for v in field.enum_type.values
        if v.number != 0
    )
    raise ValueError(f"{name!r} is not one of {choices}")
