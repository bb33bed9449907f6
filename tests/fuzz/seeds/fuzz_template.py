"""Seeds for fuzz_template: every fixture chat template, plus a few snippets that reach the
interpreter's corners (macros, call blocks, filters, slicing, namespaces, whitespace control)."""
import pathlib

SNIPPETS = [
    "{% for m in messages %}{{ loop.index }}{{ m.role | upper }}{% if not loop.last %},{% endif %}{% endfor %}",
    "{% macro f(a, b=1) %}{{ a ~ b }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ f(1, 2, 3, k=4) }}",
    "{% macro w() %}<{{ caller('x') }}>{% endmacro %}{% call(v) w() %}{{ v }}{% endcall %}",
    "{% set ns = namespace(a=[]) %}{% for x in range(3) %}{% set ns.a = ns.a + [x] %}{% endfor %}{{ ns.a | tojson }}",
    "{{ tools | map(attribute='function') | selectattr('name', 'equalto', 'get_weather') | list | tojson(indent=2) }}",
    "{{ messages[1].content[::-1] }}{{ messages[1].content.split(' ')[1:] }}{{ '%s' }}{{ 'a{}b'.format(1) }}",
    "{%- filter trim -%}  {{ 'x' }}  {%- endfilter -%}{% raw %}{{ y }}{% endraw %}{# c #}",
    "{{ messages | selectattr('role', 'in', ['user', 'tool']) | map(attribute='content') | join('|') }}",
    "{% for k, v in messages[2].tool_calls[0].function.arguments | dictsort %}{{ k }}={{ v | tojson }}{% endfor %}",
    "{{ (1, 2) }}{{ {'a': 1}.items() | list }}{{ 7 // 2 }}{{ 2 ** 8 }}{{ 'x' * 3 }}{{ 1 if none else 2 }}",
]


def generate(outdir: pathlib.Path, fixtures: pathlib.Path) -> None:
    templates = sorted((fixtures / "chat-templates" / "templates").glob("*.jinja"))
    if not templates:
        raise SystemExit(f"fuzz_template seeds: no templates under {fixtures / 'chat-templates' / 'templates'}")
    for path in templates:
        (outdir / path.name).write_bytes(path.read_bytes())
    for i, snippet in enumerate(SNIPPETS):
        (outdir / f"snippet_{i:02d}.jinja").write_text(snippet, encoding="utf-8")
