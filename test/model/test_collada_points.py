"""The COLLADA point reader on hand-written files with known answers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.model import UrdfError
from humanoid_sim.model.collada_points import collada_vertex_positions

NS14 = "http://www.collada.org/2005/11/COLLADASchema"
NS15 = "http://www.collada.org/2008/03/COLLADASchema"

# One shared position array of 5 points; the triangle uses points 0, 1, 2 only, and the
# <p> interleaves VERTEX (offset 0) with NORMAL (offset 1) indices.
POSITIONS = np.array([[0, 0, 0], [1, 0, 0], [0, 2, 0], [9, 9, 9], [-9, -9, -9]], dtype=float)


def dae(scene_nodes: str, unit: str = "", ns: str = NS14, extra_library: str = "") -> str:
    positions = " ".join(str(v) for v in POSITIONS.ravel())
    return f"""<?xml version="1.0"?>
<COLLADA xmlns="{ns}" version="1.4.1">
  <asset>{unit}<up_axis>Y_UP</up_axis></asset>
  <library_geometries>
    <geometry id="g"><mesh>
      <source id="g-pos"><float_array id="g-pos-array" count="15">{positions}</float_array>
        <technique_common><accessor source="#g-pos-array" count="5" stride="3"/></technique_common></source>
      <source id="g-nrm"><float_array id="g-nrm-array" count="3">0 0 1</float_array></source>
      <vertices id="g-vtx"><input semantic="POSITION" source="#g-pos"/></vertices>
      <triangles count="1"><input semantic="VERTEX" source="#g-vtx" offset="0"/>
        <input semantic="NORMAL" source="#g-nrm" offset="1"/><p>0 0 1 0 2 0</p></triangles>
    </mesh></geometry>
  </library_geometries>
  {extra_library}
  <library_visual_scenes><visual_scene id="scene">{scene_nodes}</visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#scene"/></scene>
</COLLADA>"""


def read(tmp_path: Path, text: str) -> np.ndarray:
    path = tmp_path / "m.dae"
    path.write_text(text)
    return collada_vertex_positions(path)


def as_set(points: np.ndarray) -> set[tuple[float, ...]]:
    return {tuple(np.round(p, 12)) for p in points}


def test_only_indexed_positions_are_read_and_up_axis_is_not_applied(tmp_path: Path) -> None:
    points = read(tmp_path, dae('<node id="n"><instance_geometry url="#g"/></node>'))
    assert as_set(points) == as_set(POSITIONS[:3])


def test_node_transforms_compose_in_document_order_with_units(tmp_path: Path) -> None:
    # translate(1, 2, 3) then rotate 90 deg about z then scale 2: p -> t + Rz (2 p); units in cm.
    nodes = (
        '<node id="a"><translate>1 2 3</translate><node id="b"><rotate>0 0 1 90</rotate>'
        '<scale>2 2 2</scale><instance_geometry url="#g"/></node></node>'
    )
    points = read(tmp_path, dae(nodes, unit='<unit meter="0.01"/>'))
    Rz = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    expected = 0.01 * (np.array([1.0, 2.0, 3.0]) + 2.0 * POSITIONS[:3] @ Rz.T)
    assert as_set(points) == as_set(expected)


def test_matrix_is_row_major_and_instance_nodes_are_followed(tmp_path: Path) -> None:
    library = '<library_nodes><node id="shared"><instance_geometry url="#g"/></node></library_nodes>'
    nodes = '<node id="m"><matrix>1 0 0 5  0 1 0 0  0 0 1 0  0 0 0 1</matrix><instance_node url="#shared"/></node>'
    points = read(tmp_path, dae(nodes, ns=NS15, extra_library=library))
    assert as_set(points) == as_set(POSITIONS[:3] + [5.0, 0.0, 0.0])


@pytest.mark.parametrize(
    "text, message",
    [
        ("<robot/>", "expected <COLLADA>"),
        ("not xml at all", "cannot be read"),
        (dae('<node id="n"><instance_geometry url="#nope"/></node>'), "missing '#nope'"),
        (dae(""), "no vertex positions"),
    ],
    ids=["not_collada", "not_xml", "missing_geometry", "empty_scene"],
)
def test_broken_collada_files_name_the_file(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(UrdfError, match=f"mesh '.*m.dae': .*{message}"):
        read(tmp_path, text)
