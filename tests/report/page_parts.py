"""Reading a written page the way a browser's parser would (html.parser), for the tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Element:
    tag: str
    attributes: dict
    parents: list[str]  # ids of the enclosing elements that have one
    text: str = ""
    title: str = ""  # the text of a <title> child (a marker's hover text)
    children: list = field(default_factory=list)


class Page(HTMLParser):
    """Every element with its attributes, the ids around it, and its <title> child's text."""

    def __init__(self, source: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[Element] = []
        self.stack: list[Element] = []
        self.texts: list[str] = []
        self.feed(source)
        self.close()

    def handle_starttag(self, tag, attrs):
        element = Element(
            tag, dict(attrs), [e.attributes["id"] for e in self.stack if "id" in e.attributes]
        )
        self.elements.append(element)
        self.stack.append(element)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        self.stack.pop()

    def handle_endtag(self, tag):
        while self.stack:
            element = self.stack.pop()
            if element.tag == tag:
                break

    def handle_data(self, data):
        self.texts.append(data)
        if self.stack:
            self.stack[-1].text += data
            if self.stack[-1].tag == "title" and len(self.stack) > 1:
                self.stack[-2].title += data

    def find(self, tag: str | None = None, css: str | None = None, inside: str | None = None):
        return [
            e
            for e in self.elements
            if (tag is None or e.tag == tag)
            and (css is None or css in e.attributes.get("class", "").split())
            and (inside is None or inside in e.parents)
        ]

    @property
    def text(self) -> str:
        return "".join(self.texts)
