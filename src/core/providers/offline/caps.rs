//! How much of each kind of point an offline summary keeps, from generous to tight.

/// How much of each kind of point to keep; shrunk until the summary fits its share.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Caps {
    pub(crate) points: usize,
    pub(crate) chars: usize,
    pub(crate) code_lines: usize,
    pub(crate) solutions: usize,
}

pub(crate) const CAPS: [Caps; 4] = [
    Caps {
        points: 6,
        chars: 180,
        code_lines: 8,
        solutions: 3,
    },
    Caps {
        points: 4,
        chars: 140,
        code_lines: 6,
        solutions: 2,
    },
    Caps {
        points: 3,
        chars: 110,
        code_lines: 4,
        solutions: 1,
    },
    Caps {
        points: 2,
        chars: 90,
        code_lines: 3,
        solutions: 1,
    },
];
