#!/usr/bin/env python3
"""gen_chat_template_extra.py FIXTURES OUT.json: renders every fixture chat template against richer
conversations than cases.json has (tool calls with string and dict arguments, tool results,
reasoning, multimodal content, a trailing assistant turn, an empty system prompt), each with and
without the generation prompt, with Python jinja2 as Hugging Face configures it. The renderings are
large, so OUT keeps each one's 64-bit FNV-1a hash (or that it raised); tests/unit/test_chat_template.cpp
renders the same with vellum and compares hashes.
"""
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import gen_jinja_cases  # noqa: E402

TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Get the weather", "parameters": {
        "type": "object", "properties": {
            "city": {"type": "string", "description": "City"}, "unit": {"type": "string", "enum": ["c", "f"]},
            "days": {"type": "integer"}, "opts": {"type": "array", "items": {"type": "string"}}},
        "required": ["city"]}}},
    {"type": "function", "function": {"name": "search", "description": "Search",
                                      "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}},
]

CONVERSATIONS = {
    "tool_call_str": {"messages": [
        {"role": "system", "content": "Sys."}, {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "call_1", "type": "function", "function": {
            "name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": "{\"temp\": 21}"},
        {"role": "assistant", "content": "It is 21C."}, {"role": "user", "content": "Thanks"}], "tools": TOOLS},
    "tool_call_dict": {"messages": [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
            "name": "get_weather", "arguments": {"city": "Paris", "days": 2}}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}], "tools": TOOLS},
    "reasoning": {"messages": [
        {"role": "user", "content": "Q1"},
        {"role": "assistant", "content": "<think>hmm</think>A1", "reasoning_content": "hmm"},
        {"role": "user", "content": "Q2"}], "enable_thinking": True},
    "no_think": {"messages": [{"role": "user", "content": "Q1"}], "enable_thinking": False},
    "multimodal": {"messages": [{"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                                            {"type": "image"}]}]},
    "assistant_last": {"messages": [{"role": "user", "content": "Q"}, {"role": "assistant", "content": "Partial"}]},
    "empty_system": {"messages": [{"role": "system", "content": ""}, {"role": "user", "content": "x"}]},
}


def fnv1a64(data: bytes) -> str:
    h = 0xcbf29ce484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def main() -> int:
    fixtures = pathlib.Path(sys.argv[1])
    env = gen_jinja_cases.make_env()
    results = []
    for path in sorted((fixtures / "chat-templates" / "templates").glob("*.jinja")):
        template = env.from_string(path.read_text(encoding="utf-8"))
        for cid, conv in CONVERSATIONS.items():
            for agp in (True, False):
                ctx = dict(conv, add_generation_prompt=agp, bos_token="<s>", eos_token="</s>")
                rec = {"template": path.name, "conversation": cid, "add_generation_prompt": agp}
                try:
                    rec["fnv1a64"] = fnv1a64(template.render(**ctx).encode("utf-8"))
                except Exception as e:  # noqa: BLE001 - the template refused: vellum must refuse too
                    rec["error"] = f"{type(e).__name__}: {e}"
                results.append(rec)
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump({"conversations": CONVERSATIONS, "renders": results}, f, ensure_ascii=False, indent=0)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
