"""HTTP faces of ibistatic: the Archive server (``ibistatic serve``), its Archive service
(resolution-system §7), and the live resolver network of §5, §6.2 and §8."""
