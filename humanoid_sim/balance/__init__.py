"""Balance quantities: ZMP of the ground reaction, support polygon, stability margin."""

from humanoid_sim.balance.zmp import (
    ZmpReport,
    signed_distance_to_polygon,
    support_polygon,
    zmp_from_wrench,
    zmp_report,
)

__all__ = ["ZmpReport", "signed_distance_to_polygon", "support_polygon", "zmp_from_wrench", "zmp_report"]
