package memory

import (
	"context"
	"strconv"
	"strings"
	"time"

	"ducklm/backend"
)

// Cursor marks where a page of a listing ended: the last memory shown. The
// next page starts after it in the listing's order (newest first, the id
// breaking ties), so deleting a memory never shifts the pages that follow.
type Cursor struct {
	CreatedAt time.Time
	ID        string
}

// IsZero reports whether the cursor is unset (the first page).
func (c Cursor) IsZero() bool { return c.ID == "" }

// String renders the cursor as "CREATED_MICROS.ID", the opaque text a user
// interface hands back for the next page.
func (c Cursor) String() string {
	if c.IsZero() {
		return ""
	}
	return strconv.FormatInt(c.CreatedAt.UnixMicro(), 10) + "." + c.ID
}

// ParseCursor reads Cursor.String's text; "" is the zero cursor.
func ParseCursor(s string) (Cursor, error) {
	if s == "" {
		return Cursor{}, nil
	}
	micros, id, ok := strings.Cut(s, ".")
	us, err := strconv.ParseInt(micros, 10, 64)
	if !ok || err != nil || backend.CheckID(id, backend.KindMemory) != nil {
		return Cursor{}, backend.Errorf(backend.EINVALID, "%q is not a page of the memory list; start again from the first page", s)
	}
	return Cursor{CreatedAt: time.UnixMicro(us).UTC(), ID: id}, nil
}

// Page is one page of a listing.
type Page struct {
	Memories []Memory `json:"memories"`
	// Next is the cursor of the following page, "" on the last one.
	Next string `json:"next"`
}

// Page returns up to q.Limit memories (newest first) after q.Before, and
// the cursor of the next page. A Limit of 0 means DefaultPage.
func (s *Store) Page(ctx context.Context, q ListQuery) (Page, error) {
	if q.Limit == 0 {
		q.Limit = DefaultPage
	}
	if q.Limit < 0 || q.Limit > MaxPage {
		return Page{}, backend.Errorf(backend.EINVALID, "a page of memories holds 1 to %d, not %d", MaxPage, q.Limit)
	}
	want := q.Limit
	q.Limit++ // one more says whether another page follows
	list, err := s.List(ctx, q)
	if err != nil {
		return Page{}, err
	}
	p := Page{Memories: list}
	if len(list) > want {
		p.Memories = list[:want]
		last := p.Memories[want-1]
		p.Next = Cursor{CreatedAt: last.CreatedAt, ID: last.ID}.String()
	}
	if p.Memories == nil {
		p.Memories = []Memory{}
	}
	return p, nil
}

// DefaultPage and MaxPage bound a page of a listing.
const (
	DefaultPage = 50
	MaxPage     = 500
)
