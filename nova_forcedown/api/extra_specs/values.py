"""The kinds of value a known extra spec takes.

Each says of a value it refuses what Nova says, so a client sees the same
400.
"""

import re

from oslo_utils import strutils

from nova_forcedown import exception


class Text:
    """Any string: the spec is known, its value is the host's business."""

    def check(self, value):
        pass


class Choice:
    def __init__(self, *choices):
        self.choices = choices

    def check(self, value):
        if value not in self.choices:
            raise exception.ExtraSpecInvalid(
                detail="'%s' is not one of: %s." % (
                    value, ', '.join(self.choices)))


class Format:
    """A string matching ``pattern`` whole; the refusal quotes it."""

    def __init__(self, pattern):
        self.pattern = pattern
        self._compiled = re.compile(pattern)

    def check(self, value):
        if not self._compiled.fullmatch(value):
            raise exception.ExtraSpecInvalid(
                detail="'%s' is not of the format '%s'." % (
                    value, self.pattern))


class Integer:
    def __init__(self, minimum=None, maximum=None):
        self.minimum = minimum
        self.maximum = maximum

    def check(self, value):
        try:
            number = int(value)
        except ValueError:
            raise exception.ExtraSpecInvalid(
                detail="'%s' is not a valid integer value." % value)
        if self.maximum is not None and number > self.maximum:
            raise exception.ExtraSpecInvalid(
                detail="'%s' is greater than the max value of '%s'." % (
                    value, self.maximum))
        if self.minimum is not None and number < self.minimum:
            raise exception.ExtraSpecInvalid(
                detail="'%s' is less than the min value of '%s'." % (
                    value, self.minimum))


class Boolean:
    """Any of oslo.utils' words for true and false (yes, on, 1, f...)."""

    def check(self, value):
        try:
            strutils.bool_from_string(value, strict=True)
        except ValueError:
            raise exception.ExtraSpecInvalid(
                detail="'%s' is not a valid boolean-like value." % value)


TEXT = Text()
BOOLEAN = Boolean()
COUNT = Integer(minimum=0)
POSITIVE = Integer(minimum=1)
INTEGER = Integer()
