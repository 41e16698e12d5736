"""Broken URDFs: each raises UrdfError whose message names the bad element."""

from __future__ import annotations

from pathlib import Path

import pytest

from humanoid_sim.model import UrdfError, load_urdf

INERTIAL = (
    '<inertial><mass value="1"/>'
    '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>'
)


def link(name: str, inertial: str = INERTIAL, extra: str = "") -> str:
    return f'<link name="{name}">{inertial}{extra}</link>'


def joint(name: str, parent: str, child: str, jtype: str = "revolute", extra: str = "") -> str:
    return (
        f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/>'
        f'<child link="{child}"/>{extra}</joint>'
    )


def robot(*parts: str) -> str:
    return '<robot name="r">' + "".join(parts) + "</robot>"


def inertial(mass: str, ixx: str = "0.1", iyy: str = "0.1", izz: str = "0.1", ixy: str = "0") -> str:
    return (
        f'<inertial><mass value="{mass}"/><inertia ixx="{ixx}" ixy="{ixy}" ixz="0"'
        f' iyy="{iyy}" iyz="0" izz="{izz}"/></inertial>'
    )


def mesh(filename: str) -> str:
    return f'<collision><geometry><mesh filename="{filename}"/></geometry></collision>'


# (id, URDF text, regex the message must match: it names the element and the fault)
CASES = [
    ("not_xml", "<robot name='r'><link name='a'>", r"not valid XML"),
    ("no_robot", "<model name='r'><link name='a'/></model>", r"<model>.*expected <robot>"),
    ("empty_robot", robot(), r"robot 'r': empty robot"),
    (
        "missing_parent",
        robot(link("a"), joint("j", "nope", "a")),
        r"joint 'j': parent link 'nope' is not defined",
    ),
    (
        "missing_child",
        robot(link("a"), joint("j", "a", "ghost")),
        r"joint 'j': child link 'ghost' is not defined",
    ),
    ("cycle_all", robot(link("a"), link("b"), joint("j1", "a", "b"), joint("j2", "b", "a")), r"cycle"),
    (
        "cycle_detached",
        robot(link("r0"), link("a"), link("b"), joint("j1", "a", "b"), joint("j2", "b", "a")),
        r"links a, b form a cycle",
    ),
    ("self_parent", robot(link("a"), joint("j", "a", "a")), r"joint 'j': link 'a' is its own parent"),
    ("two_roots", robot(link("a"), link("b")), r"2 root links \(a, b\)"),
    ("duplicate_link", robot(link("a"), link("a")), r"link 'a': defined twice"),
    (
        "duplicate_joint",
        robot(link("a"), link("b"), link("c"), joint("j", "a", "b"), joint("j", "a", "c")),
        r"joint 'j': defined twice",
    ),
    (
        "two_parents",
        robot(link("a"), link("b"), link("c"), joint("j1", "a", "c"), joint("j2", "b", "c")),
        r"link 'c': has two parent joints, 'j1' and 'j2'",
    ),
    ("negative_mass", robot(link("a", inertial("-1"))), r"link 'a': negative mass"),
    ("zero_mass_with_inertia", robot(link("a", inertial("0"))), r"link 'a': zero mass with non-zero inertia"),
    ("nan_mass", robot(link("a", inertial("nan"))), r"link 'a' <mass value>: non-finite"),
    ("inf_mass", robot(link("a", inertial("inf"))), r"link 'a' <mass value>: non-finite"),
    (
        "inertia_not_psd",
        robot(link("a", inertial("1", ixx="-0.1"))),
        r"link 'a': inertia not positive semi-definite",
    ),
    (
        "inertia_off_diagonal_not_psd",
        robot(link("a", inertial("1", ixy="0.5"))),
        r"link 'a': inertia not positive semi-definite",
    ),
    (
        "inertia_triangle",
        robot(link("a", inertial("1", ixx="0.1", iyy="0.1", izz="0.3"))),
        r"link 'a': inertia violates the triangle inequality",
    ),
    (
        "inertial_without_mass",
        robot(link("a", "<inertial><inertia ixx='1' iyy='1' izz='1'/></inertial>")),
        r"link 'a': <inertial> without <mass>",
    ),
    (
        "unknown_joint_type",
        robot(link("a"), link("b"), joint("j", "a", "b", "hinge")),
        r"joint 'j': unknown type 'hinge'; valid types: revolute",
    ),
    (
        "zero_axis",
        robot(link("a"), link("b"), joint("j", "a", "b", extra='<axis xyz="0 0 0"/>')),
        r"joint 'j': zero <axis xyz>",
    ),
    (
        "lower_above_upper",
        robot(
            link("a"),
            link("b"),
            joint("j", "a", "b", extra='<limit lower="1" upper="-1" effort="1" velocity="1"/>'),
        ),
        r"joint 'j': <limit> lower 1.0 > upper -1.0",
    ),
    (
        "negative_effort",
        robot(
            link("a"),
            link("b"),
            joint("j", "a", "b", extra='<limit lower="0" upper="1" effort="-1" velocity="1"/>'),
        ),
        r"joint 'j': negative <limit effort>",
    ),
    (
        "negative_velocity",
        robot(
            link("a"),
            link("b"),
            joint("j", "a", "b", extra='<limit lower="0" upper="1" effort="1" velocity="-2"/>'),
        ),
        r"joint 'j': negative <limit velocity>",
    ),
    (
        "malformed_number",
        robot(link("a"), link("b"), joint("j", "a", "b", extra='<origin xyz="1.0 abc 0"/>')),
        r"joint 'j' <origin xyz>: malformed number in '1.0 abc 0'",
    ),
    (
        "malformed_limit",
        robot(
            link("a"),
            link("b"),
            joint("j", "a", "b", extra='<limit lower="x" upper="1" effort="1" velocity="1"/>'),
        ),
        r"joint 'j' <limit lower>: malformed number",
    ),
    (
        "xyz_two_components",
        robot(link("a"), link("b"), joint("j", "a", "b", extra='<origin xyz="1 2"/>')),
        r"joint 'j' <origin xyz>: expected 3 numbers, got 2",
    ),
    (
        "rpy_four_components",
        robot(link("a", '<inertial><origin rpy="0 0 0 1"/><mass value="1"/></inertial>')),
        r"link 'a' <inertial> <origin rpy>: expected 3 numbers, got 4",
    ),
    (
        "floating_joint",
        robot(link("a"), link("b"), joint("j", "a", "b", "floating")),
        r"joint 'j': floating joints are not supported",
    ),
    (
        "planar_joint",
        robot(link("a"), link("b"), joint("j", "a", "b", "planar")),
        r"joint 'j': planar joints are not supported",
    ),
    (
        "mimic_joint",
        robot(
            link("a"),
            link("b"),
            link("c"),
            joint("j1", "a", "b"),
            joint("j2", "a", "c", extra='<mimic joint="j1"/>'),
        ),
        r"joint 'j2': <mimic> joints are not supported",
    ),
    (
        "joint_without_child",
        robot(link("a"), '<joint name="j" type="fixed"><parent link="a"/></joint>'),
        r"joint 'j': missing <child link=...>",
    ),
    ("link_without_name", robot("<link/>"), r"a <link> has no name"),
    (
        "unknown_geometry",
        robot(link("a", extra='<collision name="c"><geometry><cone radius="1"/></geometry></collision>')),
        r"link 'a' collision 'c': unknown geometry <cone>",
    ),
    (
        "empty_geometry",
        robot(link("a", extra="<collision><geometry/></collision>")),
        r"link 'a' collision '0': <geometry> missing or empty",
    ),
    (
        "negative_box",
        robot(link("a", extra='<collision><geometry><box size="1 -1 1"/></geometry></collision>')),
        r"link 'a' collision '0': negative size",
    ),
    (
        "missing_mesh_file",
        robot(link("a", extra=mesh("file:///nonexistent/dir/part.stl"))),
        r"link 'a' collision '0': mesh '/nonexistent/dir/part.stl': file not found",
    ),
    (
        "unknown_package",
        robot(link("a", extra=mesh("package://no_such_pkg_xyz/meshes/a.stl"))),
        r"link 'a' collision '0': package 'no_such_pkg_xyz' not found",
    ),
    (
        "unsupported_mesh_format",
        robot(link("a", extra=mesh("file:///tmp/part.3ds"))),
        r"link 'a' collision '0': mesh '/tmp/part.3ds': unsupported format '.3ds'",
    ),
    (
        "unsupported_uri_scheme",
        robot(link("a", extra=mesh("http://example.com/a.stl"))),
        r"link 'a' collision '0': resource 'http://example.com/a.stl': unsupported URI scheme",
    ),
]


@pytest.mark.parametrize("urdf, pattern", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_broken_urdf_raises_named_error(urdf: str, pattern: str) -> None:
    with pytest.raises(UrdfError, match=pattern):
        load_urdf(urdf)


def test_there_are_at_least_twenty_distinct_cases() -> None:
    assert len({c[0] for c in CASES}) == len(CASES) >= 20


def test_unreadable_file_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "absent.urdf"
    with pytest.raises(UrdfError, match="absent.urdf.*cannot be read"):
        load_urdf(missing)


# Broken robot files: (id, file content, message after "URDF file '<path>': ")
BROKEN_FILES = [
    ("binary", bytes(range(256)) * 8, "not valid XML"),
    ("png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64), "not valid XML"),
    ("empty", b"", "empty file (0 bytes)"),
    ("blank", b"  \n\t\n", "empty file (5 bytes)"),
    ("not_xml", b"robot: {name: r}\n", "not valid XML"),
    ("truncated", b'<robot name="r"><link name="a">', "not valid XML"),
    ("not_a_robot", b'<?xml version="1.0"?><sdf version="1.9"/>', "root element is <sdf>, expected <robot>"),
]


@pytest.mark.parametrize("content, message", [c[1:] for c in BROKEN_FILES], ids=[c[0] for c in BROKEN_FILES])
def test_broken_file_is_one_line_naming_file_and_fault(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "robot.urdf"
    path.write_bytes(content)
    with pytest.raises(UrdfError) as caught:
        load_urdf(path)
    text = str(caught.value)
    assert text.startswith(f"URDF file {str(path)!r}: {message}")
    assert "\n" not in text


def test_a_directory_or_nothing_is_not_a_robot(tmp_path: Path) -> None:
    with pytest.raises(UrdfError, match=f"URDF file {str(tmp_path)!r}: cannot be read \\(Is a directory\\)"):
        load_urdf(tmp_path)
    with pytest.raises(UrdfError, match="empty URDF: neither a file name nor XML"):
        load_urdf("")


def test_corrupt_mesh_file_names_the_mesh(tmp_path: Path) -> None:
    bad = tmp_path / "broken.obj"
    bad.write_text("this is not an OBJ file\n")
    with pytest.raises(UrdfError, match="link 'a' collision '0': mesh .*broken.obj"):
        load_urdf(robot(link("a", extra=mesh(str(bad)))))


def test_urdf_error_is_a_value_error() -> None:
    assert issubclass(UrdfError, ValueError)


def test_default_axis_is_x_and_allowed() -> None:
    model = load_urdf(robot(link("a"), link("b"), joint("j", "a", "b")))
    assert model.joint_axis[1].tolist() == [1.0, 0.0, 0.0]
