"""URDF to an immutable RobotModel."""
