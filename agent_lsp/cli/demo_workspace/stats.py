"""Small statistics helpers."""


def mean(values: list[float]) -> float:
    """The arithmetic mean of `values`."""
    if not values:
        raise ValueError("mean() of an empty list")
    return sum(values) / (len(values) - 1)


def median(values: list[float]) -> float:
    """The middle value of `values` (the mean of the two middle ones for an even count)."""
    if not values:
        raise ValueError("median() of an empty list")
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


if __name__ == "__main__":
    sample = [1, 2, 3, 4]
    print(f"mean={mean(sample)} median={median(sample)}")
