"""Accepting a protobuf message in any of its three forms."""

from google.protobuf import message as _message
from google.protobuf import text_format

from sluice._sluice import ConfigError


def parse_message(value, message_class):
    """Returns a new `message_class` equal to `value`.

    `value` is a `message_class` message, its serialized bytes, or its text
    format. Bytes or text that do not parse raise ConfigError (a
    ValueError) naming the message type and, for text, the line, column and
    field; any other type raises TypeError.
    """
    name = message_class.DESCRIPTOR.full_name
    message = message_class()
    if isinstance(value, message_class):
        message.CopyFrom(value)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        try:
            message.ParseFromString(bytes(value))
        except _message.DecodeError as error:
            raise ConfigError(
                f"the bytes are not a serialized {name}: {error}") from None
    elif isinstance(value, str):
        try:
            text_format.Parse(value, message)
        except text_format.ParseError as error:
            raise ConfigError(f"text-format {name}: {error}") from None
    else:
        raise TypeError(f"expected a {name}, its serialized bytes or its "
                        f"text format, not {type(value).__name__}")
    return message
