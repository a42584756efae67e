from __future__ import annotations

# ----------------------------------------------------------------------------------------------
# A small JSON Schema check for tool arguments (the subset the tool schemas below use)
# ----------------------------------------------------------------------------------------------


class ArgumentError(Exception):
    """Tool arguments that do not match the tool's inputSchema."""


_JSON_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
}


def check_arguments(schema, value, where="arguments"):
    kind = schema.get("type")
    if kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise ArgumentError(f"{where} must be an integer")
    elif kind == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ArgumentError(f"{where} must be a number")
    elif kind is not None and not isinstance(value, _JSON_TYPES[kind]):
        raise ArgumentError("{} must be {} {}".format(where, "an" if kind[0] in "ao" else "a", kind))
    if "enum" in schema and value not in schema["enum"]:
        raise ArgumentError("{} must be one of: {}".format(where, ", ".join(map(str, schema["enum"]))))
    if kind in ("integer", "number"):
        if "minimum" in schema and value < schema["minimum"]:
            raise ArgumentError("{} must be at least {}".format(where, schema["minimum"]))
        if "maximum" in schema and value > schema["maximum"]:
            raise ArgumentError("{} must be at most {}".format(where, schema["maximum"]))
    elif kind == "string":
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ArgumentError(f"{where} is not valid Unicode text") from None
        if "\x00" in value:
            raise ArgumentError(f"{where} contains a NUL character")
        if len(value) < schema.get("minLength", 0):
            raise ArgumentError(f"{where} must not be empty")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise ArgumentError(f"{where} is {len(value)} characters; the limit is {schema['maxLength']}")
    elif kind == "array":
        if len(value) < schema.get("minItems", 0):
            raise ArgumentError(f"{where} needs at least {schema['minItems']} item(s)")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            raise ArgumentError(f"{where} has {len(value)} items; the limit is {schema['maxItems']}")
        if "items" in schema:
            value = [check_arguments(schema["items"], v, f"{where}[{i}]") for i, v in enumerate(value)]
    elif kind == "object":
        properties = schema.get("properties", {})
        for name in schema.get("required", ()):
            if name not in value:
                raise ArgumentError(
                    f"{where}.{name} is required"
                    if where != "arguments"
                    else f"argument {name!r} is required"
                )
        if schema.get("additionalProperties") is False:
            unknown = sorted(set(value) - set(properties))
            if unknown:
                raise ArgumentError(
                    "unknown {}: {} (allowed: {})".format(
                        "argument" if where == "arguments" else "field in " + where,
                        ", ".join(unknown),
                        ", ".join(properties) or "none",
                    )
                )
        value = {
            k: check_arguments(properties[k], v, k if where == "arguments" else f"{where}.{k}")
            if k in properties
            else v
            for k, v in value.items()
        }
    return value
