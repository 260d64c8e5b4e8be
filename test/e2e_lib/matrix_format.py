"""A lit test format that generates the end-to-end method tests from a table.

A `.matrix` file (test/e2e/methods.matrix) holds one block per method: the
rows of cells it runs on, then the method's test, written once like a .test
file. Every (method, model, form) cell becomes one lit test named
`<dir>/matrix/<method>/<model>/<form>`. Just before it runs, the cell's test
is written out with the cell's values in place of its placeholders, as
`Output/<form>.test` under the test's exec directory, and lit's ShTest runs
that file like any other .test file (so %s is that file). The other files of
the directory are ShTest files as usual.

A block, each directive at the start of its line:

    METHOD: <name>
        Starts the block; it runs to the next METHOD: line.
    CELLS: <model> [<model>...] | <form> [<form>...]
        A row: the cells (model x form) the test runs on. One or more.
    WITH: %{<name>} = <value>
        A value for the row above; every row of a block binds the same names.

Comments among the rows are about the rows. Everything after the block's last
row is the test, in which %{model} and %{form} stand for the cell and
%{<name>} for the row's WITH: values. A placeholder with an empty value takes
the space before it along.
"""
import os
import re

import lit.formats
import lit.Test

FORMS = ("script", "trace")
PLACEHOLDER = re.compile(r"%\{([_a-zA-Z][-_:0-9a-zA-Z]*)\}")
# A placeholder with the space before it, which goes with an empty value.
SPACED_PLACEHOLDER = re.compile(r"( ?)%\{([_a-zA-Z][-_:0-9a-zA-Z]*)\}")
DIRECTIVE = re.compile(r"\s*(METHOD|CELLS|WITH):(.*)$")
NAME = re.compile(r"[_a-zA-Z][-_0-9a-zA-Z]*$")


class Cell:
    """One generated test: a method's test, as a .test file's text, for one
    model and form."""

    def __init__(self, method, model, form, text):
        self.method, self.model, self.form = method, model, form
        self.text = text


class MatrixError(Exception):
    def __init__(self, path, line, message):
        super().__init__(f"{path}:{line}: {message}")


class _Row:
    def __init__(self, line, models, forms):
        self.line, self.models, self.forms = line, models, forms
        self.values = {}


class _Method:
    def __init__(self, line, name):
        self.line, self.name = line, name
        self.rows = []
        self.text = []  # the test's lines, after the last row


def _parse_row(path, number, body):
    models, bar, forms = body.partition("|")
    models, forms = models.split(), forms.split()
    if not bar or not models or not forms:
        raise MatrixError(path, number,
                          "expected 'CELLS: <model>... | <form>...'")
    for model in models:
        if not NAME.match(model):
            raise MatrixError(path, number, f"bad model name '{model}'")
    for form in forms:
        if form not in FORMS:
            raise MatrixError(path, number,
                              f"form '{form}' is not one of {', '.join(FORMS)}")
    return _Row(number, models, forms)


def _parse_blocks(path):
    methods = []
    with open(path, encoding="utf-8") as table:
        lines = table.read().splitlines()
    for number, line in enumerate(lines, start=1):
        directive = DIRECTIVE.match(line)
        if not directive:
            if methods:
                methods[-1].text.append((number, line))
            elif line.strip() and not line.lstrip().startswith("#"):
                raise MatrixError(path, number, "text before the first METHOD:")
            continue
        keyword, body = directive.group(1), directive.group(2).strip()
        if keyword == "METHOD":
            if not NAME.match(body):
                raise MatrixError(path, number, f"bad method name '{body}'")
            methods.append(_Method(number, body))
            continue
        if not methods:
            raise MatrixError(path, number, f"{keyword}: before the first METHOD:")
        method = methods[-1]
        # Comments among the rows are about the rows; the test starts after
        # the last row.
        for text_number, text in method.text:
            if text.strip() and not text.lstrip().startswith("#"):
                raise MatrixError(path, text_number,
                                  f"test text before the method's last {keyword}:")
        method.text.clear()
        if keyword == "CELLS":
            method.rows.append(_parse_row(path, number, body))
            continue
        # WITH: %{name} = value
        name, equals, value = body.partition("=")
        placeholder = PLACEHOLDER.fullmatch(name.strip())
        if not equals or not placeholder:
            raise MatrixError(path, number, "expected 'WITH: %{<name>} = <value>'")
        if not method.rows:
            raise MatrixError(path, number, "WITH: before the method's first CELLS:")
        name, row = placeholder.group(1), method.rows[-1]
        if name in ("model", "form") or name in row.values:
            raise MatrixError(path, number, f"%{{{name}}} is already bound")
        row.values[name] = value.strip()
    for method in methods:
        method.text = [text for _, text in method.text]
        # Blank lines around the test are not the test's.
        while method.text and not method.text[0].strip():
            method.text.pop(0)
        while method.text and not method.text[-1].strip():
            method.text.pop()
    return methods


def _check_method(path, method, seen_methods):
    if method.name in seen_methods:
        raise MatrixError(path, method.line, f"method '{method.name}' repeated")
    seen_methods.add(method.name)
    if not method.rows:
        raise MatrixError(path, method.line, f"method '{method.name}' has no CELLS:")
    if not any("RUN:" in text for text in method.text):
        raise MatrixError(path, method.line, f"method '{method.name}' has no RUN:")
    # A binding missing from a row, or misspelt, would otherwise reach the
    # shell as text or go unused.
    used = {name for text in method.text for name in PLACEHOLDER.findall(text)}
    bound = set(method.rows[0].values)
    for row in method.rows:
        if set(row.values) != bound:
            raise MatrixError(path, row.line,
                              "rows of one method must bind the same names: "
                              f"{sorted(row.values)} vs {sorted(bound)}")
    unused = sorted(bound - used)
    if unused:
        raise MatrixError(path, method.rows[0].line,
                          f"%{{{unused[0]}}} is bound but the test does not use it")


def _substitute(text, values):
    def replace(match):
        space, name = match.groups()
        if name not in values:  # one of lit's (%{pathsep}, ...)
            return match.group(0)
        return space + values[name] if values[name] else ""

    return SPACED_PLACEHOLDER.sub(replace, text)


def read_matrix(path):
    """Returns the cells of a .matrix file, in table order; raises MatrixError
    on a malformed table."""
    cells, seen_methods, seen_cells = [], set(), set()
    for method in _parse_blocks(path):
        _check_method(path, method, seen_methods)
        for row in method.rows:
            for model in row.models:
                for form in row.forms:
                    if (method.name, model, form) in seen_cells:
                        raise MatrixError(path, row.line,
                                          f"cell {method.name}/{model}/{form} repeated")
                    seen_cells.add((method.name, model, form))
                    values = dict(row.values, model=model, form=form)
                    header = (f"# Generated by test/e2e_lib/matrix_format.py from "
                              f"{os.path.basename(path)}, line {method.line}: "
                              f"method {method.name}, model {model}, form {form}.\n")
                    body = "".join(_substitute(text, values) + "\n"
                                   for text in method.text)
                    cells.append(Cell(method.name, model, form, header + body))
    return cells


class MatrixTest(lit.Test.Test):
    """A test generated from one cell; its source is the file written from
    the cell just before it runs."""

    def __init__(self, suite, path_in_suite, config, table_path, cell):
        super().__init__(suite, path_in_suite, config, file_path=table_path)
        self.cell = cell

    def getSourcePath(self):
        exec_dir, name = os.path.split(self.getExecPath())
        return os.path.join(exec_dir, "Output", name + ".test")


class MatrixFormat(lit.formats.ShTest):
    """ShTest, plus one test per cell of each .matrix file."""

    def getTestsForPath(self, testSuite, path_in_suite, litConfig, localConfig):
        filename = path_in_suite[-1]
        if os.path.splitext(filename)[1] != ".matrix":
            yield from super().getTestsForPath(testSuite, path_in_suite,
                                               litConfig, localConfig)
            return
        table_path = testSuite.getSourcePath(path_in_suite)
        try:
            cells = read_matrix(table_path)
        except (MatrixError, OSError) as error:
            litConfig.error(str(error))
            return
        for cell in cells:
            path = path_in_suite[:-1] + ("matrix", cell.method, cell.model, cell.form)
            yield MatrixTest(testSuite, path, localConfig, table_path, cell)

    def execute(self, test, litConfig):
        if isinstance(test, MatrixTest):
            source = test.getSourcePath()
            os.makedirs(os.path.dirname(source), exist_ok=True)
            with open(source, "w", encoding="utf-8") as out:
                out.write(test.cell.text)
        return super().execute(test, litConfig)
