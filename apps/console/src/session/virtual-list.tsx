// A list that renders only the rows in view (plus a margin): a session of thousands of items
// scrolls as smoothly as a short one. Row heights are measured once rendered and estimated
// before; the list sticks to the bottom while it is there, so streaming never jumps.
import type { ComponentChildren } from 'preact';
import { useLayoutEffect, useRef, useState } from 'preact/hooks';

export interface Row {
  key: string;
  render: () => ComponentChildren;
}

const ESTIMATE_PX = 96;
const OVERSCAN_PX = 800;
const BOTTOM_SLACK_PX = 48;

export function VirtualList({
  rows,
  label,
  scrollToTop,
}: {
  rows: Row[];
  label: string;
  scrollToTop: number;
}) {
  const box = useRef<HTMLDivElement>(null);
  const heights = useRef(new Map<string, number>());
  const atBottom = useRef(true);
  const [view, setView] = useState({ top: 0, height: 800 });
  const [, remeasured] = useState(0);

  const offsets: number[] = new Array(rows.length + 1);
  offsets[0] = 0;
  for (let i = 0; i < rows.length; i++)
    offsets[i + 1] = offsets[i]! + (heights.current.get(rows[i]!.key) ?? ESTIMATE_PX);
  const total = offsets[rows.length]!;
  let start = 0;
  while (start < rows.length && offsets[start + 1]! < view.top - OVERSCAN_PX) start++;
  let end = start;
  while (end < rows.length && offsets[end]! < view.top + view.height + OVERSCAN_PX) end++;

  // Measure what was rendered; a changed height re-renders once with the true offsets.
  useLayoutEffect(() => {
    const node = box.current;
    if (!node) return;
    let changed = false;
    for (const child of node.querySelectorAll<HTMLElement>('[data-row]')) {
      const key = child.dataset['row']!;
      const height = child.offsetHeight;
      if (heights.current.get(key) !== height) {
        heights.current.set(key, height);
        changed = true;
      }
    }
    if (atBottom.current) node.scrollTop = node.scrollHeight;
    if (changed) remeasured((n) => n + 1);
  });

  useLayoutEffect(() => {
    if (scrollToTop > 0 && box.current) {
      atBottom.current = false;
      box.current.scrollTop = 0;
      setView((v) => ({ ...v, top: 0 }));
    }
  }, [scrollToTop]);

  const onScroll = () => {
    const node = box.current;
    if (!node) return;
    atBottom.current = node.scrollHeight - node.scrollTop - node.clientHeight < BOTTOM_SLACK_PX;
    setView({ top: node.scrollTop, height: node.clientHeight });
  };

  return (
    <div
      ref={box}
      class="vlist"
      role="log"
      aria-label={label}
      aria-live="off"
      tabIndex={0}
      onScroll={onScroll}
    >
      <div style={{ height: `${total}px`, position: 'relative' }}>
        <div style={{ transform: `translateY(${offsets[start]}px)` }}>
          {rows.slice(start, end).map((row) => (
            <div key={row.key} data-row={row.key} class="vrow">
              {row.render()}
            </div>
          ))}
        </div>
      </div>
    </div>
  );
}
