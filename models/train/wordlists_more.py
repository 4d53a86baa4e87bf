"""Later editions of the word lists: more terms for every open list (the second and
third were written in the project's third session). wordlists.split_all splits each
edition on its own, so an earlier edition's held-out words stay held out and each
edition adds train and held-out words in the same 75/25 proportion. No entry repeats
one of an earlier edition.
"""


def words(block):
    """One entry per line; blank lines and surrounding spaces ignored (wordlists.py uses
    it too: this module cannot import that one, which imports this)."""
    return [w.strip() for w in block.strip().splitlines() if w.strip()]


FIRST_NAMES_MORE = words("""
Oliver
Harriet
Eleanor
Theodore
Beatrice
Winston
Clarence
Gwendolyn
Mildred
Harold
Lillian
Cecil
Vivian
Marjorie
Eugene
Gertrude
Wilfred
Rosalind
Imogen
Rupert
Penelope
Reginald
Josephine
Nathaniel
Lorraine
Dwayne
Tamika
LaToya
Jamal
DeShawn
Keisha
Marcus
Darnell
Tyrone
Brianna
Kayla
Courtney
Lindsey
Travis
Dustin
Wyatt
Colton
Hadley
Everett
Aubrey
Evelyn
Mabel
Edith
Doris
Clifford
Leonard
Stanley
Wendell
Lucille
Geraldine
Bernadette
Phyllis
Arthur
Percy
Archibald
Harvey
Mortimer
Ophelia
Quentin
Rosalie
Gladys
Irene
Marlene
Maureen
Kendra
Shanice
Jermaine
Desmond
Terrence
Lamar
Latisha
Demetrius
Jalen
Kiara
Alejandro
Ximena
Fernando
Guillermo
Rodrigo
Marisol
Catalina
Esteban
Ignacio
Paloma
Remedios
Encarnación
Nicolás
Andrés
Jesús
Ramón
Agustín
Dolores
Mercedes
Araceli
Yolanda
Rocío
Nuria
Itziar
Ainhoa
Maite
Concepción
Adrián
Héctor
Rubén
Óscar
Julián
Fabián
Cristóbal
Efraín
Lourdes
Soledad
Amparo
Montserrat
João
Gonçalo
Inês
Conceição
Sebastião
Leonor
Thiago
Caio
Luíza
Vitória
Rafaela
Joaquim
Estêvão
Fábio
Flávia
Márcio
Cláudia
Antônio
Vinícius
Letícia
Étienne
Benoît
Céline
Sébastien
Thérèse
Amélie
Mathéo
Clémence
Aurélien
Geneviève
Jérôme
Océane
Rémi
Frédéric
Honoré
Josée
Ghislaine
Mélanie
Jacques
Yves
Marcel
Brigitte
Delphine
Solène
Timothée
Margaux
Jannik
Friedrich
Wolfgang
Günther
Uwe
Dieter
Hannelore
Ursula
Gisela
Sabine
Jörg
Käthe
Mathilde
Lieselotte
Henrike
Heinz
Klaus
Bärbel
Ingeborg
Annegret
Maximilian
Leonie
Alessandro
Lorenzo
Federico
Giuseppe
Salvatore
Vincenzo
Carmela
Rosalba
Gianluca
Niccolò
Ludovica
Alessia
Elisabetta
Raffaele
Concetta
Assunta
Pietro
Donatella
Gaetano
Ilaria
Krzysztof
Grzegorz
Agnieszka
Katarzyna
Jędrzej
Bożena
Dorota
Stanisław
Mirosław
Jadwiga
Bartłomiej
Przemysław
Żaneta
Halina
Ewa
Ryszard
Zbigniew
Magdalena
Jaroslav
Zdeněk
Kateřina
Lenka
Vojtěch
Ondřej
Bohumil
Květa
Miroslava
Gábor
Zsófia
Levente
Erzsébet
Ildikó
Tamás
Katalin
Csaba
Gergely
Réka
Bence
Enikő
Attila
Zsuzsanna
Mehmet
Ayşe
Emre
Elif
Mustafa
Zeynep
Hülya
Burak
Gökhan
Ece
İlknur
Serkan
Tuğba
Ömer
Büşra
Derya
Khalid
Noura
Tariq
Samira
Abdullah
Rania
Karim
Yasmin
Hamza
Ibrahim
Amira
Bilal
Faisal
Huda
Mahmoud
Salma
Waleed
Youssef
Mounir
Nadia
Jamila
Dariush
Shirin
Farhad
Parisa
Reza
Mehdi
Golnar
Niloufar
Babak
Kourosh
Roya
Laleh
Arash
Soraya
Navid
Azadeh
Leila
Aarav
Ishaan
Lakshmi
Meenakshi
Venkatesh
Anjali
Pooja
Nikhil
Siddharth
Aditi
Rohan
Neha
Gaurav
Shreya
Harpreet
Gurpreet
Manpreet
Balwinder
Karthik
Divya
Suresh
Ramesh
Padma
Srinivas
Aishwarya
Vijay
Kiran
Nandini
Prakash
Asif
Imran
Saima
Nadeem
Shazia
Zubair
Sana
Ayesha
Hina
Waqar
Fahad
Mehwish
Rabia
Rafiq
Tasnim
Sharmin
Mahbub
Nusrat
Arif
Farzana
Shakil
Anwar
Tanvir
Moushumi
Xiaoming
Jiahui
Zhiwei
Yuxuan
Haoran
Meiling
Jianguo
Lihua
Xinyi
Zihan
Shufen
Weiming
Qiang
Ji-hoon
Seo-jun
Ha-eun
Do-yoon
Ye-jin
Eun-ji
Hyun-woo
Min-seo
Jae-won
Seung-min
Soo-jin
Dong-hyun
Yeon-woo
Takeshi
Haruka
Sota
Yui
Akira
Emiko
Hinata
Daisuke
Naoko
Yoshiko
Kazuki
Mitsuko
Ryota
Aoi
Shota
Megumi
Tomoko
Huong
Minh
Tuan
Phuong
Trang
Khanh
Ngoc
Thuy
Hieu
Nhung
Quynh
Huy
Maricel
Jomar
Rosalinda
Analyn
Marilou
Rodel
Ligaya
Bayani
Dalisay
Rogelio
Imelda
Marites
Arnel
Rowena
Adebayo
Folasade
Temitope
Babatunde
Funmilayo
Ayodele
Olumide
Yetunde
Kehinde
Taiwo
Bukola
Damilola
Tolulope
Chukwuemeka
Nkechi
Obinna
Chiamaka
Ifeanyi
Uchenna
Chidinma
Ikechukwu
Amarachi
Nnamdi
Ebere
Abubakar
Hauwa
Aminu
Sadiq
Maryam
Usman
Halima
Kwabena
Akosua
Adwoa
Kwaku
Afua
Kwesi
Esi
Kojo
Efua
Akua
Kobina
Wanjiku
Njeri
Kiprono
Chebet
Achieng
Nyambura
Wairimu
Akinyi
Muthoni
Cherono
Baraka
Zawadi
Neema
Dawit
Tigist
Meron
Selam
Yohannes
Mulugeta
Hiwot
Alemayehu
Mekdes
Bereket
Rahel
Tsion
Abdirahman
Hodan
Ayaan
Farhiya
Abdiweli
Hamdi
Ilhan
Nimco
Ubah
Faadumo
Sahra
Abdikarim
Aleksei
Yekaterina
Anastasia
Vladimir
Tatiana
Nikolai
Mikhail
Lyudmila
Galina
Boris
Yelena
Pyotr
Irina
Gennady
Vasily
Ksenia
Artyom
Oleksandr
Bohdan
Taras
Mykola
Yaroslava
Oksana
Olena
Vasyl
Dmytro
Yuliia
Andriy
Solomiia
Dimitrios
Konstantinos
Georgios
Vasiliki
Panagiotis
Despina
Athanasios
Christos
Evangelia
Stavros
Kalliopi
Spyridon
Fotini
Sven
Håkan
Åsa
Solveig
Eirik
Ragnhild
Torbjørn
Kjersti
Pekka
Aino
Jukka
Sanna
Eino
Mikko
Gunnar
Jørgen
Birgitta
Henrik
Linnea
Ásgeir
Guðrún
Ólafur
Hildur
Ciarán
Róisín
Pádraig
Caoimhe
Tadhg
Cathal
Gráinne
Fionnuala
Ruairí
Clodagh
Éamon
Sinéad
Diarmuid
Máire
Aisling
Bríd
Declan
Wiremu
Rangi
Tama
Anahera
Nikau
Manaia
Kahu
Hine
Rawiri
Whetu
Hōhepa
Mereana
Winona
Kateri
Tallulah
Sequoyah
Chenoa
Aiyana
Nizhoni
Kiona
Takoda
Kohana
Kalani
Noelani
Kainoa
""")


LAST_NAMES_MORE = words("""
Fitzpatrick
Gallagher
Donnelly
Kavanagh
Brennan
Sullivan
McCarthy
Byrne
Doyle
Nolan
Whelan
Hennessy
Callahan
O'Sullivan
O'Neill
O'Donnell
O'Reilly
O'Malley
MacKenzie
McLeod
McGregor
McIntyre
Henderson
Sutherland
Ferguson
Armstrong
Crawford
Pemberton
Whitfield
Ashby
Blackwood
Thornton
Hargreaves
Worthington
Holloway
Pritchard
Llewellyn
Vaughan
Griffiths
Davies
Jenkins
Stevenson
Harrington
Donovan
Hawkins
Jennings
Whitaker
Schofield
Ridley
Barnett
Caldwell
Dalton
Hutchinson
Ellison
Prescott
Sinclair
Lockhart
Galloway
Abernathy
Radcliffe
Carrington
Atherton
Pennington
Rutherford
Underwood
Wainwright
Pettigrew
Featherstone
Smith-Jones
Bowes-Lyon
Baden-Powell
Parker-Bowles
Jones-Davies
Goldstein
Rosenberg
Katz
Shapiro
Weinstein
Horowitz
Feldman
Kaplan
Ben-David
Mizrahi
Peretz
van der Merwe
van den Broek
van Leeuwen
de Jong
ter Haar
Du Plessis
Le Roux
De la Cruz
De los Santos
Del Rosario
De León
Dela Peña
Da Silva
Dos Santos
D'Angelo
Dell'Acqua
Di Stefano
De Luca
Lo Bianco
St. Clair
von Richthofen
Al-Hassan
Al-Farsi
Al-Rashid
El-Sayed
Al-Masri
Ó Súilleabháin
Ní Mhurchú
Castillo
Morales
Vargas
Herrera
Medina
Aguilar
Delgado
Vásquez
Castro
Ortega
Guzmán
Mendoza
Ruiz
Rojas
Soto
Contreras
Salazar
Cabrera
Espinoza
Navarro
Domínguez
Cortés
Sandoval
Villanueva
Cervantes
Zamora
Beltrán
Echeverría
Goikoetxea
Ibarra
Urrutia
Velázquez
Márquez
Benítez
Carrasco
Ribeiro
Ferreira
Gonçalves
Rodrigues
Fernandes
Marques
Teixeira
Moreira
Barbosa
Cardoso
Azevedo
Magalhães
Nascimento
Araújo
Monteiro
Correia
Cavalcanti
Fontaine
Lambert
Chevalier
Lefebvre
Marchand
Duval
Mercier
Gauthier
Perrin
Tremblay
Gagnon
Pelletier
Thibodeaux
Boudreaux
Arsenault
Desjardins
Lemieux
Bérubé
Thériault
Poirier
Beaulieu
Létourneau
Ménard
Dufresne
Schmidt
Schneider
Fischer
Weber
Wagner
Becker
Hoffmann
Schulz
Zimmermann
Krüger
Hartmann
Schäfer
Neumann
Böhm
Lehmann
Wolff
Baumann
Kühn
Fuchs
Pfeiffer
Brandt
Dietrich
Eckert
Marino
Greco
Bruno
Conti
Mancini
Giordano
Rizzo
Lombardi
Moretti
Barbieri
Santoro
Rinaldi
Caruso
Ferrara
Martinelli
Vitale
Coppola
De Santis
Marchetti
Pellegrini
Palumbo
Sorrentino
Woźniak
Kozłowski
Jankowski
Mazur
Kwiatkowski
Krawczyk
Piotrowski
Grabowski
Pawłowski
Michalski
Adamczyk
Zając
Wieczorek
Jabłoński
Król
Stępień
Szymański
Dąbrowski
Novotný
Černý
Veselý
Horák
Pokorný
Pospíšil
Jelínek
Růžička
Beneš
Sedláček
Doležal
Krejčí
Nagy
Molnár
Németh
Farkas
Balogh
Takács
Juhász
Mészáros
Szilágyi
Fehér
Balázs
Szűcs
Aydın
Arslan
Doğan
Kılıç
Özdemir
Şimşek
Erdoğan
Yıldız
Yıldırım
Korkmaz
Saleh
Hamdan
Jaber
Nassar
Suleiman
Darwish
Khoury
Abboud
Najjar
Barakat
Mahfouz
Hosseini
Mohammadi
Rahimi
Karimi
Ahmadi
Jafari
Tehrani
Ghorbani
Sadeghi
Rostami
Shirazi
Kazemi
Hashemi
Agarwal
Mehta
Joshi
Desai
Chopra
Malhotra
Kapoor
Pillai
Menon
Subramanian
Krishnan
Mukherjee
Ghosh
Saxena
Trivedi
Sandhu
Dhillon
Bhattacharya
Kulkarni
Deshpande
Shetty
Srivastava
Qureshi
Malik
Siddiqui
Abbasi
Akhtar
Mirza
Bhatti
Rizvi
Chowdhury
Hossain
Uddin
Talukder
Bhuiyan
Majumder
Zheng
Liang
Xie
Deng
Xiao
Jiang
Wong
Leung
Cheung
Kwok
Tsang
Yoon
Kwon
Hwang
Baek
Ahn
Sato
Ito
Kato
Yoshida
Yamada
Sasaki
Matsumoto
Inoue
Hayashi
Shimizu
Hashimoto
Ishikawa
Fujita
Murakami
Sakamoto
Võ
Đặng
Bùi
Huỳnh
Trương
Ngô
Reyes
Bautista
Aquino
Macapagal
Dimaculangan
Panganiban
Tolentino
Gatchalian
Evangelista
Adekunle
Ogunleye
Afolabi
Balogun
Oladipo
Akinola
Nwosu
Okeke
Nwankwo
Anyanwu
Nwachukwu
Danjuma
Abdullahi
Yakubu
Asante
Appiah
Agyeman
Acheampong
Frimpong
Quartey
Mwangi
Ochieng
Kiprotich
Njoroge
Kariuki
Odhiambo
Tesfaye
Bekele
Tadesse
Gebremariam
Mekonnen
Getachew
Warsame
Hirsi
Samatar
Sokolov
Popov
Lebedev
Novikov
Morozov
Vasiliev
Zaitsev
Shevchenko
Kovalenko
Bondarenko
Tkachenko
Melnyk
Kovalchuk
Nikolaidis
Karagiannis
Christodoulou
Stavropoulos
Papageorgiou
Eriksson
Karlsson
Nilsson
Gustafsson
Rasmussen
Lindgren
Nyström
Halvorsen
Heikkinen
Hämäläinen
Ólafsson
Waititi
Te Kanawa
Tamihana
Tsosie
Benally
Harjo
Mankiller
Standing Bear
Red Cloud
Kahananui
""")


CITIES_MORE = words("""
Grand Rapids
Ann Arbor
Kalamazoo
Ypsilanti
Saginaw
Duluth
Rochester
Syracuse
Schenectady
Poughkeepsie
Ithaca
Binghamton
Scranton
Allentown
Wilkes-Barre
Akron
Youngstown
Fort Wayne
South Bend
Evansville
Peoria
Rockford
Champaign
Cedar Rapids
Sioux Falls
Fargo
Rapid City
Billings
Missoula
Bozeman
Laramie
Provo
Ogden
Salt Lake City
Reno
Las Vegas
Scottsdale
Tempe
Yuma
Santa Rosa
Modesto
Stockton
Visalia
Oxnard
Pasadena
Long Beach
Anaheim
Escondido
Chula Vista
San Luis Obispo
Redding
Tacoma
Bellingham
Yakima
Walla Walla
Kennewick
Pocatello
Idaho Falls
Lubbock
Amarillo
Abilene
Waco
Killeen
McAllen
Galveston
Shreveport
Lake Charles
Biloxi
Gulfport
Hattiesburg
Tuscaloosa
Huntsville
Pensacola
Gainesville
Jacksonville
Fort Lauderdale
Boca Raton
St. Petersburg
Sarasota
Fort Myers
Key West
Savannah
Macon
Chattanooga
Knoxville
Memphis
Murfreesboro
Bowling Green
Paducah
Asheville
Winston-Salem
Greensboro
Wilmington
Fayetteville
Myrtle Beach
Roanoke
Virginia Beach
Fredericksburg
Morgantown
Hagerstown
Jersey City
Hoboken
Atlantic City
Stamford
New Haven
Waterbury
Bridgeport
Worcester
Pittsfield
Fall River
New Bedford
Nashua
Bangor
Brattleboro
Woonsocket
Pawtucket
Kenosha
Green Bay
Eau Claire
La Crosse
Oshkosh
Sheboygan
Dubuque
Council Bluffs
Joplin
Kansas City
St. Louis
Stillwater
Broken Arrow
Fort Smith
Jonesboro
Las Cruces
Roswell
Durango
Fort Collins
Colorado Springs
Grand Junction
Fairbanks
Ketchikan
Hilo
Kahului
Cheektowaga
Yonkers
St. Catharines
Saint-Laurent
Mississauga
Brampton
Kitchener
Guelph
Sudbury
Thunder Bay
Sault Ste. Marie
Oshawa
Sherbrooke
Gatineau
Longueuil
Lévis
Saguenay
Rimouski
Moncton
Fredericton
Charlottetown
St. John's
Regina
Red Deer
Lethbridge
Kelowna
Kamloops
Nanaimo
Burnaby
Yellowknife
Iqaluit
Sheffield
Bradford
Nottingham
Leicester
Coventry
Southampton
Norwich
Ipswich
Exeter
Gloucester
Cheltenham
Sunderland
Newcastle upon Tyne
Middlesbrough
Stoke-on-Trent
Wolverhampton
Aberdeen
Dundee
Inverness
Swansea
Wrexham
Lisburn
Bournemouth
Milton Keynes
Huddersfield
Shrewsbury
Waterford
Kilkenny
Sligo
Drogheda
Dundalk
Athlone
Tralee
Killarney
Letterkenny
Dún Laoghaire
Wexford
Melbourne
Brisbane
Hobart
Canberra
Geelong
Wollongong
Toowoomba
Townsville
Ballarat
Bendigo
Wagga Wagga
Launceston
Alice Springs
Fremantle
Christchurch
Tauranga
Dunedin
Palmerston North
Whangārei
Invercargill
Queenstown
Gisborne
Whanganui
New Plymouth
Bengaluru
Hyderabad
Kolkata
Ahmedabad
Jaipur
Lucknow
Kanpur
Nagpur
Bhopal
Vadodara
Ludhiana
Varanasi
Amritsar
Thiruvananthapuram
Coimbatore
Madurai
Mysuru
Visakhapatnam
Guwahati
Chandigarh
Bhubaneswar
Abuja
Ibadan
Port Harcourt
Benin City
Abeokuta
Onitsha
Owerri
Ilorin
Maiduguri
Calabar
Zaria
Guadalajara
Monterrey
Tijuana
Ciudad Juárez
Querétaro
San Luis Potosí
Aguascalientes
Hermosillo
Culiacán
Morelia
Toluca
Cancún
Mazatlán
Acapulco
Ensenada
Marseille
Toulouse
Bordeaux
Strasbourg
Montpellier
Saint-Étienne
Aix-en-Provence
Hamburg
Frankfurt am Main
Stuttgart
Leipzig
Nürnberg
Hannover
Innsbruck
Salzburg
Lausanne
Bologna
Palermo
Verona
Sevilla
Zaragoza
Bilbao
San Sebastián
Valladolid
Salamanca
Lisboa
Coimbra
Rotterdam
Utrecht
Eindhoven
Groningen
's-Hertogenbosch
Antwerpen
Liège
Wrocław
Szczecin
Białystok
Katowice
Olomouc
České Budějovice
Debrecen
Szeged
Pécs
Győr
Košice
Ljubljana
Thessaloniki
Heraklion
Trondheim
Stavanger
Uppsala
Linköping
Örebro
Odense
Aalborg
Tampere
Jyväskylä
Akureyri
""")


STREET_NAMES_MORE = words("""
Cherry Blossom
Martin Luther King Jr
Old Mill
Tremont
Juniper Ridge
Beacon
Commonwealth
Peachtree
Ponce de Leon
Wilshire
Sepulveda
La Cienega
Figueroa
Sunnyside
Willowbrook
Fox Run
Deer Creek
Bluebell
Honeysuckle
Wisteria
Sweetbriar
Azalea
Gardenia
Hemlock
Spruce
Tamarack
Linden
Alder
Buckeye
Sassafras
Persimmon
Pecan
Palmetto
Mesquite
Saguaro
Ocotillo
Manzanita
Arroyo Seco
Vista del Mar
Paseo del Norte
Camino del Sol
Saint-Denis
Edgewater
Cobblestone
Fieldstone
Flintlock
Wagon Wheel
Stagecoach
Old Post
Ridgecrest
Crestview
Woodland
Brookside
Bayberry
Cranberry
Blueberry
Elderberry
Mockingbird
Bluebird
Oriole
Whippoorwill
Meadowlark
Kingfisher
Pheasant Run
Quail Hollow
Turkey Creek
Bear Creek
Wolf Creek
Eagle Ridge
Timberline
Pinehurst
Ponderosa
Sequoia
Redbud
Locust
Ironwood
Cottonwood
Boxwood
Wildwood
Kenwood
Elmwood
Maplewood
Oakmont
Harvard
Yale
Princeton
Dartmouth
Amherst
Stanford
Berkeley
Cornell
Sherman
Sheridan
Lafayette
Pulaski
Kosciuszko
Steuben
Pershing
Eisenhower
Truman
Coolidge
Garfield
McKinley
Van Ness
Lombard
Geary
Divisadero
Haight
Boylston
Newbury
Marlborough
Dorchester
Wabash
Halsted
Clybourn
Lake Shore
Tchoupitoulas
Nicollet
Hennepin
Euclid
Woodward
Gratiot
Twin Oaks
Old Orchard
Saw Mill
Mill Pond
Millbrook
Rock Creek
Sugar Maple
Silver Birch
Biscayne
Brickell
Flagler
Seminole
Cherokee
Shawnee
Iroquois
Mohawk
Seneca
Onondaga
Algonquin
Cross Creek
Tanglewood
Sherwood
Canterbury
Kensington
Devonshire
Buckingham
Carriage Hill
Hunters Glen
Foxcroft
Applewood
Dogwood Trace
Laurel Oak
Sandpiper
Driftwood
Sea Breeze
Tidewater
Lighthouse
""")


HOSPITAL_HEADS_MORE = words("""
Saint Vincent
Mount Carmel
Riverbend
Cedar Valley
Mount Sinai
Saint Francis
Saint Anthony's
St. Elizabeth's
Saint Jude
Our Lady of Lourdes
Holy Family
Holy Name
Good Shepherd
Divine Savior
Beth Israel
Queen of Angels
Saint Agnes
Saint Catherine's
St. Bernard's
Saint Clare's
St. Rita's
Saint Peter's
St. Michael's
Saint Raphael's
Saint Barnabas
Saint Alphonsus
St. Dominic's
Saint Thomas
Saint Patrick's
Sisters of Charity
Little Company of Mary
Lenox Hill
Mount Auburn
Cedar Crest
Pine Ridge
Maple Grove
Willow Creek
Sunrise
Desert Springs
Palomar
Mission Hills
Twin Cities
Tri-County
Tri-City
Northwestern
Southeastern
Mid-Valley
Upstate
Three Rivers
Five Rivers
Blue Ridge
Piedmont
Gulf Coast
Glenwood
Brookhaven
Hillside
Greenbrier
Shady Grove
Northridge
Southridge
Westbrook
Cape Fear
Rocky Mountain
Big Sky
Golden Valley
Silver Cross
Hudson Valley
Mohawk Valley
Allegheny
Susquehanna
Catawba
Sierra Vista
Alta Bates
El Camino
Wellspring
Crystal Lake
Prairie View
Bay Harbor
Lakewood Ranch
Spring Valley
""")


STATES_MORE = words("""
British Columbia
Saskatchewan
New Brunswick
Newfoundland and Labrador
Prince Edward Island
Yukon
Northwest Territories
Nunavut
QC
SK
MB
NL
YT
NU
District of Columbia
Puerto Rico
Guam
American Samoa
US Virgin Islands
Northern Mariana Islands
New South Wales
Victoria
Queensland
South Australia
Western Australia
Tasmania
Northern Territory
Australian Capital Territory
NSW
VIC
QLD
TAS
England
Scotland
Wales
Northern Ireland
Yorkshire
Lancashire
Kent
Essex
Devon
Cornwall
Cumbria
Norfolk
Suffolk
Surrey
Sussex
Hampshire
Somerset
Dorset
Cheshire
Derbyshire
Lincolnshire
Oxfordshire
Northumberland
Merseyside
Greater Manchester
West Midlands
County Kerry
County Clare
County Mayo
County Donegal
County Wicklow
County Tipperary
Bayern
Baden-Württemberg
Nordrhein-Westfalen
Niedersachsen
Hessen
Thüringen
Maharashtra
Tamil Nadu
Kerala
Karnataka
Uttar Pradesh
West Bengal
Punjab
Gujarat
Rajasthan
Telangana
Jalisco
Nuevo León
Yucatán
Oaxaca
Baja California
Sonora
Michoacán
Chiapas
Quintana Roo
Anambra
Oyo
Ogun
Borno
Ekiti
Osun
""")


CONDITIONS_MORE = words("""
NSTEMI
STEMI
CAD
HTN
HLD
AFib
A-fib
CHF exacerbation
HFrEF
HFpEF
diastolic heart failure
hypertensive urgency
hypertensive emergency
hypertrophic cardiomyopathy
dilated cardiomyopathy
ischemic cardiomyopathy
takotsubo cardiomyopathy
demand ischemia
ventricular tachycardia
ventricular fibrillation
supraventricular tachycardia
SVT
sinus bradycardia
sinus tachycardia
complete heart block
second-degree AV block
first-degree AV block
left bundle branch block
right bundle branch block
Wolff-Parkinson-White syndrome
long QT syndrome
sick sinus syndrome
mitral stenosis
aortic regurgitation
tricuspid regurgitation
mitral valve prolapse
abdominal aortic aneurysm
AAA
thoracic aortic aneurysm
aortic dissection
pericardial effusion
cardiac tamponade
myocarditis
rheumatic heart disease
orthostatic hypotension
hypotension
cardiogenic shock
peripheral vascular disease
critical limb ischemia
intermittent claudication
Raynaud phenomenon
varicose veins
chronic venous insufficiency
superficial thrombophlebitis
DVT
ARDS
acute respiratory failure
hypoxemic respiratory failure
hypercapnic respiratory failure
COPD exacerbation
asthma exacerbation
status asthmaticus
aspiration pneumonia
hospital-acquired pneumonia
ventilator-associated pneumonia
interstitial lung disease
idiopathic pulmonary fibrosis
pulmonary hypertension
cor pulmonale
emphysema
empyema
pulmonary nodule
atelectasis
pertussis
bronchiolitis
croup
cystic fibrosis
pleurisy
obesity hypoventilation syndrome
hemothorax
tension pneumothorax
pulmonary edema
mesothelioma
small cell lung cancer
lung abscess
GI bleed
lower GI bleed
esophageal varices
Barrett's esophagus
esophagitis
eosinophilic esophagitis
achalasia
Mallory-Weiss tear
hiatal hernia
gastroparesis
H. pylori infection
C. diff colitis
Clostridioides difficile infection
ischemic colitis
microscopic colitis
diverticulosis
large bowel obstruction
ileus
sigmoid volvulus
anal fissure
perianal abscess
fecal incontinence
hepatic encephalopathy
ascites
spontaneous bacterial peritonitis
NAFLD
NASH
alcoholic hepatitis
autoimmune hepatitis
primary biliary cholangitis
primary sclerosing cholangitis
choledocholithiasis
ascending cholangitis
biliary colic
hemochromatosis
Wilson disease
jaundice
dysphagia
odynophagia
hematemesis
melena
hematochezia
bloating
dyspepsia
heartburn
esophageal cancer
gastric cancer
cholangiocarcinoma
pancreatic pseudocyst
chronic pancreatitis
acute pancreatitis
hepatitis A
umbilical hernia
ventral hernia
incisional hernia
pilonidal cyst
anal fistula
short bowel syndrome
portal hypertension
portal vein thrombosis
CKD stage 3
CKD stage 4
ESRD
AKI
hyperkalemia
hypokalemia
hyponatremia
hypernatremia
hypocalcemia
hypercalcemia
hypomagnesemia
hypophosphatemia
metabolic acidosis
metabolic alkalosis
respiratory acidosis
diabetic ketoacidosis
DKA
hyperosmolar hyperglycemic state
nephrotic syndrome
glomerulonephritis
IgA nephropathy
polycystic kidney disease
diabetic nephropathy
renal artery stenosis
hydronephrosis
urinary retention
overactive bladder
stress incontinence
neurogenic bladder
interstitial cystitis
cystitis
prostatitis
epididymitis
testicular torsion
erectile dysfunction
bladder cancer
testicular cancer
urethral stricture
varicocele
hydrocele
phimosis
renal colic
proteinuria
rhabdomyolysis
urosepsis
BPH
nocturia
urinary frequency
urinary urgency
ischemic stroke
hemorrhagic stroke
CVA
TIA
subdural hematoma
epidural hematoma
traumatic brain injury
concussion
status epilepticus
focal seizure
absence seizure
febrile seizure
Guillain-Barre syndrome
ALS
Huntington disease
essential tremor
restless legs syndrome
trigeminal neuralgia
cluster headache
normal pressure hydrocephalus
bacterial meningitis
viral meningitis
encephalitis
diabetic neuropathy
postherpetic neuralgia
cervical radiculopathy
lumbar spinal stenosis
cauda equina syndrome
cervical myelopathy
delirium
altered mental status
aphasia
dysarthria
hemiparesis
ataxia
vasovagal syncope
narcolepsy
Lewy body dementia
vascular dementia
mild cognitive impairment
meningioma
brain metastases
tremor
paresthesia
panic disorder
social anxiety disorder
obsessive-compulsive disorder
OCD
schizoaffective disorder
borderline personality disorder
adjustment disorder
persistent depressive disorder
postpartum depression
bulimia nervosa
binge eating disorder
autism spectrum disorder
alcohol withdrawal
delirium tremens
cocaine use disorder
cannabis use disorder
tobacco use disorder
suicidal ideation
MDD
GAD
psychosis
catatonia
prediabetes
hypoglycemia
hyperglycemia
T2DM
T1DM
primary hyperparathyroidism
secondary hyperparathyroidism
hypoparathyroidism
papillary thyroid carcinoma
goiter
thyroid storm
myxedema coma
subclinical hypothyroidism
Addison disease
pheochromocytoma
primary aldosteronism
SIADH
diabetes insipidus
pituitary adenoma
prolactinoma
acromegaly
hypogonadism
osteopenia
vitamin D deficiency
morbid obesity
hypertriglyceridemia
familial hypercholesterolemia
MRSA bacteremia
necrotizing fasciitis
diabetic foot infection
septic arthritis
genital herpes
chlamydia
gonorrhea
syphilis
trichomoniasis
bacterial vaginosis
vaginal candidiasis
oral thrush
candidemia
histoplasmosis
coccidioidomycosis
aspergillosis
Pneumocystis pneumonia
infectious mononucleosis
CMV infection
malaria
dengue fever
scabies
head lice
tinea pedis
tinea corporis
onychomycosis
impetigo
hand, foot, and mouth disease
measles
mumps
chickenpox
scarlet fever
strep throat
latent tuberculosis
AIDS
Rocky Mountain spotted fever
toxic shock syndrome
prosthetic joint infection
CLABSI
CAUTI
febrile neutropenia
triple-negative breast cancer
ductal carcinoma in situ
DCIS
metastatic breast cancer
head and neck cancer
laryngeal cancer
nasopharyngeal carcinoma
endometrial cancer
non-Hodgkin lymphoma
diffuse large B-cell lymphoma
DLBCL
follicular lymphoma
mantle cell lymphoma
CLL
AML
acute lymphoblastic leukemia
chronic myeloid leukemia
CML
myelodysplastic syndrome
MDS
polycythemia vera
essential thrombocythemia
myelofibrosis
MGUS
Waldenstrom macroglobulinemia
osteosarcoma
Ewing sarcoma
neuroblastoma
Wilms tumor
retinoblastoma
Merkel cell carcinoma
carcinoid tumor
GIST
tumor lysis syndrome
malignant pleural effusion
bone metastases
liver metastases
cachexia
seborrheic dermatitis
contact dermatitis
stasis dermatitis
seborrheic keratosis
actinic keratosis
hidradenitis suppurativa
vitiligo
alopecia areata
androgenetic alopecia
pemphigus vulgaris
bullous pemphigoid
lichen planus
pityriasis rosea
tinea versicolor
molluscum contagiosum
verruca vulgaris
keloid
lipoma
epidermoid cyst
sacral pressure injury
stage 2 pressure ulcer
venous stasis ulcer
diabetic foot ulcer
erythema multiforme
Stevens-Johnson syndrome
angioedema
hives
dermatomyositis
ingrown toenail
paronychia
folliculitis
intertrigo
xerosis
polymyalgia rheumatica
giant cell arteritis
Sjogren syndrome
systemic sclerosis
scleroderma
pseudogout
reactive arthritis
vasculitis
granulomatosis with polyangiitis
polymyositis
antiphospholipid syndrome
Behcet disease
juvenile idiopathic arthritis
trochanteric bursitis
olecranon bursitis
lateral epicondylitis
tennis elbow
plantar fasciitis
de Quervain tenosynovitis
trigger finger
Dupuytren contracture
adhesive capsulitis
frozen shoulder
costochondritis
ectopic pregnancy
spontaneous abortion
hyperemesis gravidarum
placenta previa
placental abruption
preterm labor
premature rupture of membranes
PPROM
HELLP syndrome
eclampsia
gestational hypertension
postpartum hemorrhage
chorioamnionitis
uterine fibroids
ovarian cyst
ovarian torsion
pelvic inflammatory disease
PCOS
menorrhagia
dysmenorrhea
amenorrhea
abnormal uterine bleeding
postmenopausal bleeding
hot flashes
vaginal atrophy
uterine prolapse
cervical dysplasia
infertility
mastitis
fibroadenoma
neonatal jaundice
hyperbilirubinemia
failure to thrive
RSV infection
Kawasaki disease
intussusception
pyloric stenosis
infantile colic
otitis externa
acute otitis media
developmental delay
cerebral palsy
Down syndrome
patent ductus arteriosus
ventricular septal defect
atrial septal defect
tetralogy of Fallot
coarctation of the aorta
bronchopulmonary dysplasia
necrotizing enterocolitis
hypospadias
cryptorchidism
nocturnal enuresis
roseola
fifth disease
femoral neck fracture
intertrochanteric fracture
vertebral compression fracture
scaphoid fracture
clavicle fracture
proximal humerus fracture
tibial plateau fracture
ankle fracture
trimalleolar fracture
metatarsal fracture
boxer's fracture
rib fracture
pelvic fracture
stress fracture
ACL tear
medial meniscus tear
Achilles tendon rupture
shoulder dislocation
patellar dislocation
spondylolisthesis
degenerative disc disease
herniated disc
scoliosis
kyphosis
lumbar strain
whiplash
avascular necrosis
compartment syndrome
patellofemoral pain syndrome
hallux valgus
bunion
Osgood-Schlatter disease
slipped capital femoral epiphysis
Legg-Calve-Perthes disease
open-angle glaucoma
angle-closure glaucoma
retinal detachment
central retinal artery occlusion
retinal vein occlusion
allergic conjunctivitis
bacterial conjunctivitis
viral conjunctivitis
blepharitis
chalazion
hordeolum
dry eye syndrome
keratitis
corneal abrasion
uveitis
optic neuritis
papilledema
amblyopia
strabismus
myopia
presbyopia
diplopia
blurred vision
floaters
ptosis
subconjunctival hemorrhage
pterygium
diabetic macular edema
keratoconus
sensorineural hearing loss
conductive hearing loss
hearing loss
tinnitus
cerumen impaction
Meniere disease
BPPV
vestibular neuritis
labyrinthitis
epistaxis
nasal polyps
deviated septum
chronic rhinosinusitis
peritonsillar abscess
laryngitis
epiglottitis
vocal cord paralysis
hoarseness
sore throat
TMJ disorder
cholesteatoma
tympanic membrane perforation
eustachian tube dysfunction
anosmia
postnasal drip
nasal congestion
rhinorrhea
pancytopenia
leukocytosis
leukopenia
neutropenia
lymphopenia
thrombocytosis
anemia of chronic disease
macrocytic anemia
hemolytic anemia
aplastic anemia
beta thalassemia
G6PD deficiency
hereditary spherocytosis
immune thrombocytopenia
ITP
thrombotic thrombocytopenic purpura
TTP
heparin-induced thrombocytopenia
HIT
disseminated intravascular coagulation
DIC
von Willebrand disease
factor V Leiden
hypercoagulable state
coagulopathy
folate deficiency
vaso-occlusive crisis
splenomegaly
hepatomegaly
lymphadenopathy
easy bruising
petechiae
night sweats
malaise
anorexia
unintentional weight loss
weight gain
polyuria
polydipsia
orthopnea
paroxysmal nocturnal dyspnea
wheezing
stridor
pleuritic chest pain
dyspnea on exertion
DOE
lightheadedness
presyncope
diaphoresis
flank pain
pelvic pain
rectal bleeding
BRBPR
lower extremity edema
pitting edema
pallor
cyanosis
digital clubbing
myalgia
arthralgia
neck pain
knee pain
shoulder pain
hip pain
chest tightness
otalgia
photophobia
generalized weakness
recurrent falls
gait instability
tachycardia
bradycardia
hypoxia
tachypnea
rigors
hiccups
abdominal distension
early satiety
epigastric pain
RUQ pain
productive cough
chronic cough
somnolence
lethargy
agitation
hallucinations
memory loss
daytime sleepiness
""")

PROCEDURES_MORE = words("""
open appendectomy
open cholecystectomy
robotic prostatectomy
radical prostatectomy
partial nephrectomy
radical nephrectomy
total thyroidectomy
hemithyroidectomy
VATS lobectomy
lobectomy
wedge resection
pneumonectomy
segmentectomy
decortication
pleurodesis
esophagectomy
Nissen fundoplication
Heller myotomy
peroral endoscopic myotomy
partial gastrectomy
total gastrectomy
Roux-en-Y gastric bypass
laparoscopic sleeve gastrectomy
gastric banding
pancreaticoduodenectomy
distal pancreatectomy
splenectomy
partial hepatectomy
right hemicolectomy
left hemicolectomy
sigmoid colectomy
low anterior resection
abdominoperineal resection
Hartmann procedure
total colectomy
ileostomy
colostomy
colostomy reversal
small bowel resection
exploratory laparotomy
ex lap
diagnostic laparoscopy
lysis of adhesions
hemorrhoidectomy
rubber band ligation
fistulotomy
lateral internal sphincterotomy
pilonidal cystectomy
ventral hernia repair
umbilical hernia repair
incisional hernia repair
femoral hernia repair
hiatal hernia repair
CABG x3
CABG x2
CABG x4
off-pump CABG
aortic valve replacement
AVR
mitral valve repair
mitral valve replacement
MitraClip
balloon valvuloplasty
coronary stent placement
drug-eluting stent placement
balloon angioplasty
atherectomy
left heart catheterization
right heart catheterization
LHC
RHC
pericardiocentesis
pericardial window
dual-chamber pacemaker insertion
leadless pacemaker implantation
CRT-D implantation
AICD placement
loop recorder implantation
pulmonary vein isolation
AV node ablation
electrical cardioversion
DCCV
left atrial appendage occlusion
Watchman procedure
septal myectomy
LVAD implantation
heart transplant
intra-aortic balloon pump placement
IABP placement
ECMO
EVAR
TEVAR
open AAA repair
aortobifemoral bypass
fem-pop bypass
carotid artery stenting
peripheral angioplasty
embolectomy
mechanical thrombectomy
catheter-directed thrombolysis
IVC filter placement
IVC filter retrieval
endovenous ablation
sclerotherapy
AV fistula creation
AV graft placement
tunneled dialysis catheter placement
arterial line placement
A-line placement
Foley catheter placement
straight catheterization
NG tube placement
chest tube placement
tube thoracostomy
needle decompression
endotracheal intubation
rapid sequence intubation
extubation
cricothyrotomy
bag-mask ventilation
CPR
defibrillation
transcutaneous pacing
transvenous pacemaker placement
arthrocentesis
knee aspiration
corticosteroid joint injection
trigger point injection
bone marrow aspiration
external ventricular drain placement
EVD placement
VP shunt placement
laceration repair
wound vac placement
negative pressure wound therapy
splinting
casting
closed reduction
excisional biopsy
punch biopsy
shave biopsy
core needle biopsy
stereotactic breast biopsy
CT-guided biopsy
sentinel lymph node biopsy
axillary lymph node dissection
renal biopsy
prostate biopsy
endometrial biopsy
cervical biopsy
colposcopy
LEEP
cone biopsy
temporal artery biopsy
muscle biopsy
transbronchial biopsy
PEG tube placement
percutaneous endoscopic gastrostomy
J-tube placement
percutaneous cholecystostomy
percutaneous nephrostomy
ureteral stent placement
ureteroscopy
lithotripsy
ESWL
percutaneous nephrolithotomy
TURBT
vasectomy
circumcision
orchiectomy
orchiopexy
hydrocelectomy
suprapubic catheter placement
midurethral sling
ERCP
ERCP with stent placement
biliary sphincterotomy
flexible sigmoidoscopy
push enteroscopy
polypectomy
endoscopic mucosal resection
variceal banding
esophageal dilation
esophageal stent placement
EGD with biopsy
colonoscopy with polypectomy
screening colonoscopy
direct laryngoscopy
flexible bronchoscopy
bronchoalveolar lavage
EBUS-TBNA
thoracoscopy
VATS
mediastinoscopy
hysteroscopy
arthroscopic meniscectomy
knee arthroscopy
shoulder arthroscopy
total shoulder arthroplasty
reverse total shoulder arthroplasty
hemiarthroplasty
unicompartmental knee arthroplasty
revision total knee arthroplasty
TKA
THA
TKR
THR
intramedullary nailing
closed reduction and percutaneous pinning
CRPP
external fixation
kyphoplasty
vertebroplasty
ACDF
anterior cervical discectomy and fusion
microdiscectomy
foraminotomy
TLIF
posterior spinal fusion
meniscus repair
Achilles tendon repair
bunionectomy
trigger finger release
fasciotomy
below-knee amputation
BKA
above-knee amputation
toe amputation
transmetatarsal amputation
ganglion cyst excision
hardware removal
craniotomy
decompressive craniectomy
burr hole evacuation
deep brain stimulation
spinal cord stimulator placement
vagus nerve stimulator implantation
aneurysm clipping
endovascular coiling
brain tumor resection
botulinum toxin injection
radiofrequency ablation
medial branch block
facet joint injection
sacroiliac joint injection
stellate ganglion block
occipital nerve block
plasmapheresis
phacoemulsification
trabeculectomy
pars plana vitrectomy
panretinal photocoagulation
intravitreal injection
YAG laser capsulotomy
laser peripheral iridotomy
selective laser trabeculoplasty
corneal transplant
PRK
blepharoplasty
strabismus surgery
scleral buckle
myringotomy
tympanostomy tube placement
tympanoplasty
mastoidectomy
cochlear implantation
functional endoscopic sinus surgery
FESS
turbinate reduction
rhinoplasty
nasal packing
uvulopalatopharyngoplasty
UPPP
parotidectomy
neck dissection
laryngectomy
cerumen removal
ear irrigation
spontaneous vaginal delivery
NSVD
vacuum-assisted delivery
forceps delivery
repeat cesarean section
induction of labor
epidural anesthesia
amniocentesis
chorionic villus sampling
cervical cerclage
D&C
dilation and evacuation
endometrial ablation
myomectomy
TAH-BSO
total laparoscopic hysterectomy
vaginal hysterectomy
oophorectomy
salpingectomy
bilateral salpingo-oophorectomy
ovarian cystectomy
IUD insertion
IUD removal
in vitro fertilization
IVF
intrauterine insemination
episiotomy
perineal laceration repair
breast reduction
breast reconstruction
modified radical mastectomy
bilateral mastectomy
speech therapy
cardiac rehabilitation
pulmonary rehabilitation
CRRT
continuous renal replacement therapy
plasma exchange
phototherapy
hyperbaric oxygen therapy
oxygen therapy
BiPAP
CPAP
noninvasive ventilation
high-flow nasal cannula
stereotactic radiosurgery
SBRT
brachytherapy
proton therapy
IMRT
whole brain radiation therapy
adjuvant chemotherapy
neoadjuvant chemotherapy
concurrent chemoradiation
autologous stem cell transplant
allogeneic stem cell transplant
bone marrow transplant
CAR T-cell therapy
androgen deprivation therapy
radioactive iodine ablation
dialysis
transcranial magnetic stimulation
ECT
dialectical behavior therapy
psychotherapy
exposure therapy
family therapy
group therapy
motivational interviewing
alcohol detoxification
wound care
chest physiotherapy
nebulizer treatment
fluid resuscitation
TPN
total parenteral nutrition
tube feeding
red blood cell transfusion
platelet transfusion
FFP transfusion
exchange transfusion
therapeutic phlebotomy
cryotherapy
cryoablation
microwave ablation
TACE
transarterial chemoembolization
Y-90 radioembolization
uterine artery embolization
prostate artery embolization
TIPS
gastric lavage
manual disimpaction
Mohs surgery
wide local excision
electrodesiccation and curettage
cyst excision
lipoma excision
split-thickness skin graft
free flap reconstruction
escharotomy
allergy immunotherapy
""")

TESTS_MORE = words("""
CBC with differential
absolute neutrophil count
ANC
reticulocyte count
peripheral blood smear
MCV
RDW
hemoglobin electrophoresis
haptoglobin
LDH
fibrinogen
anti-Xa level
PF4 antibody
type and screen
type and crossmatch
direct Coombs test
serum iron
TIBC
transferrin saturation
folate level
methylmalonic acid
homocysteine
free T3
TPO antibodies
thyroglobulin
cortisol
AM cortisol
ACTH stimulation test
dexamethasone suppression test
ACTH
PTH
intact PTH
25-hydroxyvitamin D
prolactin
FSH
LH
estradiol level
testosterone level
beta-hCG
urine pregnancy test
quantitative hCG
AFP
CEA
CA-125
CA 19-9
LFTs
hepatic function panel
GGT
direct bilirubin
total protein
ammonia
serum osmolality
urine osmolality
urine sodium
urine protein-to-creatinine ratio
urine albumin-to-creatinine ratio
24-hour urine protein
urine drug screen
UDS
blood alcohol level
acetaminophen level
salicylate level
digoxin level
lithium level
vancomycin trough
valproic acid level
tacrolimus level
CK
creatine kinase
CK-MB
high-sensitivity troponin
troponin T
anion gap
ionized calcium
uric acid
lactic acid
venous blood gas
VBG
ABG
beta-hydroxybutyrate
urine ketones
C-peptide
insulin level
fructosamine
oral glucose tolerance test
OGTT
fingerstick glucose
point-of-care glucose
ANA
rheumatoid factor
anti-CCP antibody
anti-dsDNA antibody
complement levels
ANCA
HLA-B27
ASO titer
SPEP
serum protein electrophoresis
UPEP
serum free light chains
hepatitis C antibody
HCV RNA
hepatitis B surface antigen
HIV viral load
CD4 count
RPR
QuantiFERON-TB Gold
PPD
tuberculin skin test
Monospot test
CMV PCR
respiratory viral panel
rapid influenza test
RSV PCR
SARS-CoV-2 antigen test
Legionella urinary antigen
C. diff toxin
stool culture
stool ova and parasites
fecal occult blood test
FOBT
FIT test
fecal calprotectin
H. pylori breath test
H. pylori stool antigen
gonorrhea and chlamydia NAAT
wet mount
KOH prep
Gram stain
wound culture
CSF analysis
CSF culture
pleural fluid analysis
synovial fluid analysis
fungal culture
AFB smear
MRSA nasal swab
Pap smear
HPV test
BRCA genetic testing
CT abdomen/pelvis
CT abdomen/pelvis with contrast
CT chest
CT chest with contrast
CTA chest
CT pulmonary angiogram
CTPA
CT head without contrast
noncontrast head CT
CT cervical spine
CTA head and neck
CT perfusion
CT urogram
coronary CT angiography
coronary calcium score
low-dose CT chest
high-resolution CT chest
HRCT
CT sinus
CT maxillofacial
MRI brain with contrast
MRI brain without contrast
MRA head
MRA neck
MRI cervical spine
MRI thoracic spine
MRI knee
MRI shoulder
MRI pelvis
MRI abdomen
MRCP
cardiac MRI
breast MRI
prostate MRI
knee X-ray
hand X-ray
wrist X-ray
ankle X-ray
foot X-ray
hip X-ray
pelvis X-ray
lumbar spine X-ray
cervical spine X-ray
shoulder X-ray
abdominal X-ray
KUB
portable chest X-ray
CXR
skeletal survey
bone scan
V/Q scan
HIDA scan
gastric emptying study
thyroid ultrasound
thyroid uptake scan
pelvic ultrasound
transvaginal ultrasound
obstetric ultrasound
scrotal ultrasound
RUQ ultrasound
bladder scan
post-void residual
carotid duplex
lower extremity venous duplex
ankle-brachial index
ABI
transthoracic echocardiogram
TTE
transesophageal echocardiogram
TEE
dobutamine stress echo
nuclear stress test
myocardial perfusion imaging
exercise treadmill test
PET/CT
bone density scan
modified barium swallow
barium swallow
barium enema
upper GI series
small bowel follow-through
nonstress test
biophysical profile
diagnostic mammogram
screening mammogram
breast ultrasound
liver elastography
FibroScan
12-lead ECG
event monitor
Zio patch
ambulatory blood pressure monitoring
tilt table test
polysomnography
sleep study
home sleep apnea test
multiple sleep latency test
nerve conduction study
video EEG
continuous EEG
visual evoked potentials
audiogram
tympanometry
visual acuity
visual field testing
tonometry
intraocular pressure
optical coherence tomography
FEV1
FVC
DLCO
peak expiratory flow
six-minute walk test
methacholine challenge test
cardiopulmonary exercise test
urodynamic studies
uroflowmetry
esophageal manometry
anorectal manometry
24-hour pH monitoring
MoCA
MMSE
PHQ-9
systolic blood pressure
diastolic blood pressure
pulse
pulse oximetry
body temperature
weight
height
mean arterial pressure
MAP
central venous pressure
CVP
pain score
head circumference
urine output
end-tidal CO2
EtCO2
BP
HR
RR
orthostatic vital signs
""")

ANATOMY_MORE = words("""
left upper lobe
right lower lobe
left lung
right lung
lingula
right atrium
tricuspid valve
pulmonic valve
interventricular septum
pericardium
aorta
ascending aorta
descending aorta
aortic arch
abdominal aorta
thoracic aorta
inferior vena cava
superior vena cava
pulmonary artery
right coronary artery
left circumflex artery
left main coronary artery
right internal carotid artery
left common carotid artery
vertebral artery
basilar artery
left middle cerebral artery
posterior cerebral artery
anterior cerebral artery
subclavian artery
brachial artery
radial artery
ulnar artery
common iliac artery
external iliac artery
superficial femoral artery
popliteal artery
posterior tibial artery
dorsalis pedis artery
renal artery
superior mesenteric artery
celiac trunk
portal vein
hepatic vein
splenic vein
femoral vein
popliteal vein
great saphenous vein
right internal jugular vein
cephalic vein
basilic vein
right antecubital fossa
left lower quadrant
right upper quadrant
periumbilical region
umbilicus
suprapubic region
hypogastrium
left flank
right flank
cecum
ascending colon
transverse colon
descending colon
hepatic flexure
splenic flexure
terminal ileum
ileum
jejunum
appendix
anus
anal canal
gastroesophageal junction
gastric antrum
pylorus
gastric fundus
common bile duct
pancreatic head
pancreatic tail
right hepatic lobe
peritoneum
omentum
mesentery
retroperitoneum
inguinal canal
left groin
right ureter
left ureter
renal pelvis
adrenal gland
left adrenal gland
bladder neck
scrotum
testis
epididymis
penis
vagina
vulva
fallopian tube
left ovary
right adnexa
endometrium
perineum
pelvic floor
occipital lobe
parietal lobe
basal ganglia
thalamus
brainstem
pons
medulla
hippocampus
corpus callosum
lateral ventricle
internal capsule
pituitary gland
cerebral cortex
left hemisphere
right frontal lobe
optic nerve
facial nerve
trigeminal nerve
vagus nerve
sciatic nerve
median nerve
ulnar nerve
brachial plexus
cauda equina
C5-C6
L4-L5
L5-S1
intervertebral disc
coccyx
left sacroiliac joint
orbit
mandible
maxilla
maxillary sinus
frontal sinus
temporomandibular joint
oral cavity
tongue
hard palate
soft palate
uvula
gingiva
parotid gland
submandibular gland
epiglottis
vocal cords
nasopharynx
oropharynx
external auditory canal
middle ear
cochlea
mastoid
nasal cavity
conjunctiva
sclera
iris
lens
optic disc
macula
eyelid
lacrimal gland
forehead
occiput
face
right distal radius
left distal radius
scaphoid
fifth metacarpal
phalanges
thumb
right index finger
olecranon
lateral epicondyle
medial epicondyle
rotator cuff
supraspinatus tendon
glenohumeral joint
acromioclavicular joint
scapula
proximal humerus
left femoral neck
greater trochanter
acetabulum
patella
medial meniscus
lateral meniscus
anterior cruciate ligament
medial collateral ligament
tibial plateau
medial malleolus
lateral malleolus
Achilles tendon
calcaneus
talus
metatarsals
first metatarsophalangeal joint
left great toe
toes
plantar fascia
quadriceps
hamstring
right buttock
left thigh
shin
left lower extremity
right lower extremity
bilateral lower extremities
left upper extremity
right upper extremity
lower back
paraspinal muscles
trapezius
left deltoid
iliac crest
pubic symphysis
left sixth rib
xiphoid process
diaphragm
mediastinum
pleura
right mainstem bronchus
carina
bone marrow
axillary lymph nodes
inguinal lymph nodes
supraclavicular lymph nodes
mediastinal lymph nodes
thymus
parathyroid glands
left thyroid lobe
right breast
left breast
nipple
upper outer quadrant
dorsum of the hand
palm
sole of the foot
sacral region
perianal region
right hemithorax
precordium
anterior abdominal wall
""")

MEDICATIONS_MORE = words("""
ampicillin
ampicillin-sulbactam
penicillin G
penicillin VK
dicloxacillin
nafcillin
oxacillin
cefuroxime
cefdinir
cefpodoxime
ceftazidime
ceftaroline
cefoxitin
ertapenem
imipenem-cilastatin
aztreonam
daptomycin
tobramycin
amikacin
minocycline
erythromycin
rifampin
isoniazid
pyrazinamide
ethambutol
rifaximin
Xifaxan
fidaxomicin
fosfomycin
mupirocin
Bactroban
silver sulfadiazine
dapsone
voriconazole
posaconazole
micafungin
amphotericin B
terbinafine
Lamisil
clotrimazole
ketoconazole
famciclovir
valganciclovir
remdesivir
Paxlovid
Biktarvy
dolutegravir
Epclusa
entecavir
ivermectin
albendazole
atovaquone
permethrin
benazepril
enalapril
ramipril
candesartan
telmisartan
sacubitril-valsartan
Entresto
labetalol
nebivolol
clonidine
doxazosin
prazosin
minoxidil
metolazone
acetazolamide
triamterene-hydrochlorothiazide
ezetimibe
Zetia
fenofibrate
evolocumab
Repatha
icosapent ethyl
Crestor
Zocor
flecainide
propafenone
dofetilide
dronedarone
Multaq
ranolazine
isosorbide dinitrate
milrinone
dobutamine
norepinephrine
vasopressin
phenylephrine
esmolol
nicardipine
adenosine
atropine
alteplase
tenecteplase
argatroban
bivalirudin
fondaparinux
cilostazol
Brilinta
Pradaxa
Lovenox
Cozaar
Diovan
Coreg
Lopressor
Cardizem
Imdur
Aldactone
Bumex
Kcentra
idarucizumab
andexanet alfa
protamine sulfate
phytonadione
insulin detemir
insulin degludec
regular insulin
Lantus
Levemir
Tresiba
Humalog
Novolog
Basaglar
Toujeo
Humulin R
tirzepatide
Mounjaro
Trulicity
Victoza
Rybelsus
Farxiga
saxagliptin
Tradjenta
repaglinide
acarbose
glucagon
dextrose 50%
Janumet
liothyronine
Cytomel
Armour Thyroid
cinacalcet
calcitriol
ergocalciferol
teriparatide
raloxifene
risedronate
Fosamax
Prolia
cabergoline
octreotide
desmopressin
testosterone cypionate
estradiol
medroxyprogesterone
Depo-Provera
norethindrone
Premarin
levonorgestrel
clomiphene
megestrol
oxytocin
Pitocin
misoprostol
methylergonovine
terbutaline
magnesium sulfate
RhoGAM
Spiriva
Flovent
Pulmicort
Singulair
ProAir HFA
Atrovent
DuoNeb
ipratropium-albuterol
fluticasone-salmeterol
budesonide-formoterol
Breo Ellipta
Trelegy Ellipta
umeclidinium-vilanterol
Anoro Ellipta
beclomethasone
roflumilast
theophylline
omalizumab
Xolair
mepolizumab
dupilumab
Dupixent
benralizumab
guaifenesin
Mucinex
benzonatate
dextromethorphan
codeine
pirfenidone
nintedanib
acetylcysteine
dornase alfa
Prilosec
Pepcid
Zofran
Reglan
sucralfate
Carafate
bismuth subsalicylate
Pepto-Bismol
simethicone
dicyclomine
hyoscyamine
linaclotide
Linzess
lubiprostone
bisacodyl
Dulcolax
MiraLAX
Colace
magnesium citrate
GoLYTELY
ursodiol
cholestyramine
pancrelipase
Creon
azathioprine
mercaptopurine
certolizumab pegol
golimumab
Remicade
Entyvio
Stelara
risankizumab
Skyrizi
tofacitinib
Xeljanz
upadacitinib
Rinvoq
Lialda
balsalazide
promethazine
Phenergan
scopolamine
meclizine
aprepitant
dronabinol
Depakote
divalproex
oxcarbazepine
Trileptal
lacosamide
Vimpat
zonisamide
clobazam
phenobarbital
fosphenytoin
Dilantin
Lamictal
Topamax
rizatriptan
Maxalt
erenumab
Aimovig
rimegepant
rivastigmine
galantamine
Aricept
Namenda
Sinemet
rasagiline
amantadine
entacapone
benztropine
riluzole
pyridostigmine
glatiramer acetate
ocrelizumab
Ocrevus
natalizumab
fingolimod
dimethyl fumarate
methocarbamol
Flexeril
Zanaflex
dantrolene
Lyrica
Cymbalta
Effexor XR
Wellbutrin XL
Paxil
Celexa
Remeron
desvenlafaxine
vortioxetine
Trintellix
fluvoxamine
clomipramine
doxepin
buspirone
Abilify
Risperdal
Zyprexa
ziprasidone
lurasidone
Latuda
paliperidone
Invega Sustenna
clozapine
brexpiprazole
cariprazine
chlorpromazine
fluphenazine
Haldol
Lithobid
Klonopin
Valium
temazepam
eszopiclone
suvorexant
methylphenidate
Concerta
Adderall
lisdexamfetamine
Vyvanse
atomoxetine
guanfacine
modafinil
naltrexone
Vivitrol
acamprosate
disulfiram
Suboxone
Narcan
varenicline
Chantix
nicotine patch
chlordiazepoxide
thiamine
Dilaudid
MS Contin
OxyContin
Norco
tapentadol
hydrocodone-acetaminophen
Toradol
Celebrex
Mobic
Aleve
indomethacin
nabumetone
lidocaine patch
diclofenac gel
Voltaren gel
Fioricet
ketamine
propofol
midazolam
Versed
rocuronium
succinylcholine
sugammadex
dexmedetomidine
Precedex
lidocaine
bupivacaine
probenecid
Uloric
Colcrys
leflunomide
Plaquenil
etanercept
Enbrel
abatacept
tocilizumab
secukinumab
Cosentyx
apremilast
Otezla
belimumab
cyclophosphamide
capecitabine
Xeloda
5-fluorouracil
oxaliplatin
irinotecan
gemcitabine
docetaxel
pemetrexed
etoposide
vincristine
cytarabine
bendamustine
temozolomide
bevacizumab
Avastin
cetuximab
pertuzumab
Herceptin
Keytruda
Opdivo
ipilimumab
atezolizumab
durvalumab
osimertinib
Tagrisso
imatinib
Gleevec
ibrutinib
venetoclax
lenalidomide
Revlimid
bortezomib
daratumumab
palbociclib
Ibrance
olaparib
enzalutamide
abiraterone
leuprolide
Lupron Depot
bicalutamide
fulvestrant
exemestane
Arimidex
Rituxan
azacitidine
hydroxyurea
leucovorin
pegfilgrastim
Neulasta
darbepoetin alfa
rasburicase
everolimus
sirolimus
Prograf
CellCept
antithymocyte globulin
IVIG
iron sucrose
Venofer
ferric carboxymaltose
ferrous gluconate
tranexamic acid
eltrombopag
deferasirox
sevelamer
Renvela
calcium acetate
patiromer
sodium zirconium cyclosilicate
Lokelma
sodium polystyrene sulfonate
Kayexalate
sodium bicarbonate
calcium gluconate
mirabegron
Myrbetriq
solifenacin
tolterodine
Flomax
alfuzosin
dutasteride
Proscar
tadalafil
Cialis
Viagra
phenazopyridine
bethanechol
tretinoin
isotretinoin
adapalene
benzoyl peroxide
triamcinolone
Kenalog
clobetasol
betamethasone
hydrocortisone cream
desonide
fluocinonide
selenium sulfide
pimecrolimus
calcipotriene
latanoprost
Xalatan
timolol
brimonidine
dorzolamide-timolol
Cosopt
bimatoprost
pilocarpine
artificial tears
Restasis
prednisolone acetate
ranibizumab
aflibercept
Eylea
olopatadine
cyclopentolate
proparacaine
fexofenadine
Allegra
Claritin
Zyrtec
levocetirizine
Benadryl
Flonase
azelastine
oxymetazoline
Afrin
pseudoephedrine
Sudafed
EpiPen
Tums
Imodium
dimenhydrinate
multivitamin
fish oil
ascorbic acid
psyllium
Metamucil
activated charcoal
flumazenil
fomepizole
digoxin immune fab
calcium chloride
normal saline
lactated Ringer's
D5W
mannitol
hypertonic saline
""")

SECOND = {
    "FIRST": FIRST_NAMES_MORE,
    "LAST": LAST_NAMES_MORE,
    "CITY": CITIES_MORE,
    "STATE": STATES_MORE,
    "STREET_NAME": STREET_NAMES_MORE,
    "HOSP_HEAD": HOSPITAL_HEADS_MORE,
    "COND": CONDITIONS_MORE,
    "MED": MEDICATIONS_MORE,
    "PROC": PROCEDURES_MORE,
    "ANAT": ANATOMY_MORE,
    "TEST": TESTS_MORE,
}


# ---- Third edition ----------------------------------------------------------

FIRST_NAMES_MORE3 = words("""
Mary-Kate
Jean-Luc
Ana Sofía
Marie-Claire
Jean-Pierre
Anne-Marie
Hans-Peter
Karl-Heinz
María José
Juan Carlos
Luis Miguel
Jean-Baptiste
Marie-Hélène
Eun-young
Sung-ho
Ahanu
Adoncia
Nuno
Duarte
Tiago
Rui
Afonso
Beatriz
Mafalda
Graça
Iolanda
Joana
Matilde
Xoán
Uxía
Iker
Aitor
Unai
Nerea
Arantxa
Edurne
Gorka
Leire
Jordi
Montse
Núria
Pau
Oriol
Arnau
Mireia
Laia
Quim
Bernat
Gonzalo
Marta
Rocco
Emanuele
Ettore
Ornella
Fiorella
Benedetta
Caterina
Gianmarco
Pierluigi
Carlo
Lucrezia
Tommaso
Beppe
Serena
Annalisa
Adriano
Sandro
Orazio
Agata
Renzo
Marcello
Corrado
Ferdinand
Gottfried
Hildegard
Wilhelmina
Ulrich
Rüdiger
Waltraud
Siegfried
Gudrun
Elke
Dörte
Götz
Lothar
Helmut
Renate
Anneliese
Jochen
Heike
Britta
Malte
Joost
Sjoerd
Femke
Maarten
Anouk
Willemijn
Bram
Sanne
Thijs
Lotte
Wouter
Eline
Gijs
Joris
Hendrik
Griet
Dries
Wannes
Lieve
Amaury
Ghislain
Gaspard
Apolline
Bérénice
Clotilde
Édouard
Hervé
Isaure
Jocelyne
Lucienne
Marguerite
Odile
Pascale
Raphaëlle
Thibault
Yannick
Zoé
Armelle
Corentin
Maxence
Ninon
Séverine
Ragnar
Ingvild
Sindre
Torunn
Øystein
Åse
Sølvi
Vibeke
Mette
Rasmus
Anders
Kirsten
Frederikke
Mads
Signe
Agnetha
Elin
Björk
Gunilla
Ulrika
Pernilla
Stig
Torsten
Leena
Päivi
Tuomas
Juhani
Riikka
Ilkka
Aleksi
Kaisa
Siiri
Eero
Kristjan
Ülle
Tõnu
Liisi
Jānis
Ilze
Dace
Gintaras
Rūta
Jurgita
Vytautas
Aušra
Bogusław
Grażyna
Jolanta
Tadeusz
Wiesław
Teodora
Zuzana
Miloš
Ľubica
Radoslav
Bohuslava
Miklós
Márta
Ferenc
Piroska
Dénes
Anikó
Gyöngyi
Iulian
Ioana
Mihai
Bogdan
Andreea
Ștefan
Cristina
Dragoș
Raluca
Florin
Petar
Snežana
Dragan
Milica
Nemanja
Jelena
Vesna
Goran
Ivana
Tomislav
Mirjana
Željko
Zlatan
Amra
Emina
Haris
Mersiha
Stoyan
Boyana
Dimitar
Rumyana
Tsvetanka
Ognyan
Fatos
Arben
Blerina
Valbona
Ardit
Maro
Theodoros
Aikaterini
Charalambos
Paraskevi
Sotiris
Eirini
Anastasios
Armen
Anahit
Narek
Lusine
Tigran
Gohar
Levan
Nino
Giorgi
Tamar
Irakli
Ketevan
Nurlan
Aigerim
Yerlan
Dinara
Bakhyt
Gulnara
Timur
Zarina
Rustam
Dilnoza
Sherzod
Malika
Bekzod
Azamat
Aizhan
Farrukh
Batbayar
Oyunchimeg
Bolormaa
Ganbaatar
Tenzin
Pema
Dorje
Sonam
Pasang
Dechen
Bishnu
Sabita
Binod
Sarita
Anil
Chandana
Nuwan
Dilani
Kasun
Thilini
Chaminda
Nirosha
Sujatha
Tharindu
Ravindra
Madhuri
Shobha
Girish
Hemant
Jyoti
Usha
Mohan
Abhishek
Vaishnavi
Kamala
Parvati
Murali
Sarojini
Tanmay
Ritika
Sneha
Yash
Chetan
Jaswinder
Paramjit
Kuldeep
Simran
Rupinder
Mandeep
Farhan
Rukhsana
Nasreen
Shahid
Tahira
Junaid
Zeeshan
Kamran
Sadia
Shabnam
Rashida
Mizanur
Rumana
Shamima
Sohel
Rubina
Habibur
Sultana
Ziaur
Siti
Nurul
Ahmad Faisal
Syafiq
Aminah
Hafiz
Putri
Dewi
Agus
Bambang
Wulan
Budi
Wahyu
Ketut
Nyoman
Intan
Rizky
Somchai
Siriporn
Anong
Kittisak
Nattapong
Sunisa
Pornthip
Wichai
Chanida
Sopheak
Sokha
Dara
Vanna
Bopha
Kyaw
Thandar
Aung
Hnin
Zaw
Souksavanh
Bounmy
Phonsavanh
Duc
Lan
Bao
Hanh
Tien
Vy
Cuong
Tam
Xuan
Haruki
Ren
Mio
Sayaka
Noriko
Kaori
Takumi
Ryo
Chiyo
Fumiko
Hideo
Masato
Nobuko
Shinji
Tetsuya
Yoko
Keiko
Satoshi
Rina
Hyun-jin
Sang-woo
Ji-eun
Young-soo
Mi-kyung
Hae-won
Kyung-soo
Na-yeon
Jin-ho
Bo-ra
Chang-min
Jiayi
Yichen
Ruoxi
Zhihao
Xiuying
Guoqiang
Jianhua
Yufei
Mingyu
Ling
Hui
Yan
Chun
Qing
Jing
Lei
Bo
Tao
Kwan
Siu-ming
Ka-wai
Yee
Nomvula
Zanele
Bongani
Themba
Nokuthula
Lwazi
Mpho
Tshepo
Palesa
Kagiso
Boitumelo
Refilwe
Thabo
Naledi
Sizwe
Anele
Lindiwe
Siyabonga
Nandi
Busisiwe
Farai
Rudo
Tatenda
Chipo
Nyasha
Kudakwashe
Mwansa
Chanda
Bwalya
Mulenga
Chikondi
Kondwani
Tamanda
Mphatso
Lusungu
Asha
Juma
Amani
Rehema
Bakari
Imani
Mussa
Salim
Mwanaisha
Nafula
Jelagat
Kiplagat
Adongo
Nakato
Babirye
Mukasa
Nansubuga
Ntsiki
Uwase
Mugisha
Ineza
Keza
Aboubacar
Mamadou
Fatoumata
Ousmane
Aminata
Moussa
Mariama
Ibrahima
Awa
Seydou
Kadiatou
Cheikh
Ndeye
Modou
Khady
Boubacar
Oumou
Souleymane
Djeneba
Yaw
Yaa
Kwadwo
Adjoa
Eyram
Selorm
Edem
Dzifa
Sena
Koffi
Ablavi
Komlan
Afi
Olamide
Ayomide
Oluwatobi
Adunni
Femi
Titilayo
Ngozika
Chinonso
Kelechi
Chisom
Emeka
Adaobi
Ifeoma
Nneka
Chioma
Somto
Amaka
Zubaida
Jummai
Ladi
Garba
Asabe
Khadija
Youssra
Soufiane
Imane
Anas
Hajar
Zineb
Driss
Meriem
Rachid
Houda
Nabil
Kenza
Walid
Sami
Lina
Ghada
Hiba
Fadi
Rami
Nour
Ziad
Maha
Jihad
Hala
Bassam
Rasha
Suha
Majid
Munira
Abdulaziz
Latifa
Saud
Hessa
Fahd
Hadi
Zahra
Hossein
Maryam Sadat
Pegah
Behnam
Mahsa
Kian
Setareh
Omid
Nasrin
Ramin
Tahmineh
Ahmet
Fatma
Hakan
Sevgi
Murat
Ebru
Volkan
Gizem
Cem
Özlem
Tolga
Melek
Barış
Nilüfer
Kerem
Aslı
Ilan
Noa
Yael
Avi
Shira
Eitan
Moshe
Rivka
Yitzhak
Chaya
Menachem
Dvora
Shlomo
Tzipora
Aryeh
Miriam
Rafael
Milagros
Marisela
Xiomara
Yesenia
Maricruz
Socorro
Osvaldo
Heriberto
Wilfredo
Yadira
Nayeli
Itzel
Citlali
Xóchitl
Cuauhtémoc
Tonatiuh
Nahuel
Ayelén
Florencia
Agustina
Facundo
Tomás
Valeria
Renata
Mariela
Leandro
Gustavo
Hernán
Marcela
Ricardo
Benedito
Raimundo
Francisca
Severino
Jailson
Gleice
Kléber
Edivaldo
Rosângela
Luciana
Cássio
Maximiliano
Bruna
Débora
Thaís
Jéssica
Tainá
Iara
Ubirajara
Moacir
Nélida
Wayra
Inti
Nicanor
Amaru
Nayra
Wanda
Tupac
Lautaro
Pualani
Haunani
Kekoa
Mahina
Nālani
Keola
Lokelani
Moana
Sione
Losana
Mele
Sefa
Tevita
Ofa
Salote
Viliami
Tavita
Iosefa
Manu
Aperahama
Hemi
Ihaia
Kiri
Miriama
Ngaire
Pania
Te Ariki
Tui
Mikaere
Riria
Makerita
Chayton
Dyani
Istas
Kanoa
Macawi
Tahnee
Wapasha
Waya
Yazhi
Nascha
Doli
Ahiga
Sakari
Aputi
Nukilik
Pauloosie
Siku
Malakai
Tomasi
Akanesi
Sosaia
Ema
""")

# surnames of many origins, multi-part ones included
LAST_NAMES_MORE3 = words("""
Nogueira
Pinheiro
Quintela
Sampaio
Figueiredo
Vasconcelos
Brandão
Guimarães
Loureiro
Meireles
Tavares
Valente
Vieira
Xavier
Aragão
Bettencourt
Medeiros
Lacerda
Sequeira
dos Reis
da Cunha
de Souza
das Neves
do Nascimento
de Oliveira Lima
Arrieta
Etxeberria
Zubiri
Aranburu
Larrañaga
Olazábal
Urquiza
Mendizábal
Aguirre
Basterra
Puigdemont
Ferrer
Vilanova
Casals
Soler
Pujol
Bosch
Serra
Roca
Camps
Sabaté
Montalbán
Escobar
Valdés
Quiroga
Sepúlveda
Bustamante
Arellano
Villalobos
Montoya
Ocampo
Barrientos
Zapata
Saavedra
Carrillo
Ochoa
Tapia
Pacheco
Bermúdez
Cienfuegos
Ledesma
Urbina
Manrique
Villaseñor
Huerta
Quintanilla
Galván
Iturbide
Del Valle
de la Torre
de la Fuente
de los Ríos
San Martín
Mac Giolla
Mac Giolla Phádraig
Ó Briain
Ní Bhriain
Mac Cárthaigh
Ó Conchubhair
Ó Néill
Mac Aodha
Ó Dónaill
Kennelly
Moynihan
Cassidy
Flanagan
Mulcahy
Geraghty
Lenihan
Brosnan
Dunleavy
Keohane
Coughlan
McGuinness
McCormack
MacLean
MacAulay
Cunningham
Drummond
Buchanan
Robertson
Urquhart
Menzies
Ogilvie
Farquharson
Van Buren
Van Rensselaer
Vanderbilt
Van Houten
Van der Meer
Van den Bosch
Verhoeven
Vermeulen
Peeters
Claes
Maes
Wouters
Goossens
De Smet
Mertens
Willems
Jacobs
Dekker
Visser
Smit
Meijer
Mulder
de Boer
de Graaf
Brouwer
Hendriks
Kuipers
Bosman
Ben-Ami
Ben-Haim
Ben-Shimon
Bar-Lev
Levinson
Rabinowitz
Abramovich
Eisenberg
Grunwald
Lieberman
Mandelbaum
Rothschild
Schwartzman
Weissman
Zilberman
Avraham
Dahan
Ohana
Elbaz
Amsalem
Azoulay
Biton
Haim
Toledano
Benhamou
Guedj
Attias
Bensoussan
Chouraqui
Lévy-Bruhl
Fournier
Bonnet
Garnier
Faure
Rolland
Leclerc
Roussel
Barbier
Brunet
Masson
Picard
Renard
Vidal
Aubert
Carpentier
Lacroix
Deschamps
Boucher
Charbonneau
Laflamme
Ouellet
Paquette
Bergeron
Lachance
Gingras
Vaillancourt
Beauchemin
Saint-Pierre
Dupont-Aignan
Bauer
Vogel
Sommer
Winkler
Lorenz
Haas
Graf
Roth
Seidel
Ziegler
Kraus
Engel
Berger
Huber
Gruber
Wimmer
Steiner
Moser
Pichler
Egger
Mayr
Leitner
Brunner
Aigner
von Trapp
von Bülow
zu Guttenberg
von Weizsäcker
Leone
De Angelis
Fontana
Gallo
Morelli
Bellini
Cattaneo
Farina
Guerra
Sartori
Monti
Ruggiero
Longo
Amato
Testa
Bernardi
Di Maio
Lo Russo
La Rosa
D'Amico
Dall'Ara
Mazzoni
Fabbri
Pellegrino
Serafini
Zanetti
Nowicki
Sadowski
Zalewski
Wróblewski
Kaczmarek
Sikora
Baran
Górski
Rutkowski
Ostrowski
Czarnecki
Głowacki
Kołodziej
Chmielewski
Malinowski
Kučera
Hájek
Kratochvíl
Fiala
Němec
Marek
Šimek
Kopecký
Havel
Šťastný
Kováč
Horváthová
Baláž
Vargová
Lukács
Papp
Simon
Oláh
Vörös
Katona
Halász
Pintér
Popescu
Ionescu
Dumitrescu
Constantinescu
Stoica
Georgescu
Munteanu
Rădulescu
Moldovan
Petrović
Jovanović
Nikolić
Marković
Đorđević
Stojanović
Ilić
Pavlović
Horvat
Kovačević
Babić
Marić
Jurić
Knežević
Hadžić
Begović
Delić
Dimitrov
Georgiev
Stoyanov
Todorov
Angelov
Hristova
Hoxha
Berisha
Krasniqi
Gashi
Shehu
Kelmendi
Papadakis
Economou
Vlachos
Alexiou
Konstantinidis
Theodorou
Makris
Antoniou
Hatzidakis
Petrosyan
Hovhannisyan
Sargsyan
Grigoryan
Harutyunyan
Beridze
Kapanadze
Gelashvili
Maisuradze
Abashidze
Nurlanov
Akhmetov
Karimov
Rakhimov
Yusupov
Tursunov
Abdullayev
Mammadov
Aliyev
Hasanov
Fedorov
Orlov
Kozlov
Pavlov
Semenov
Golubev
Vinogradov
Bogdanov
Belov
Tarasov
Zhukov
Romanenko
Lysenko
Kravchenko
Savchenko
Marchenko
Rudenko
Pavlenko
Moroz
Hrytsenko
Andersson
Persson
Olsson
Svensson
Lundberg
Sjöberg
Holmberg
Åberg
Ekström
Wallin
Larsen
Pedersen
Christensen
Kristiansen
Jakobsen
Mikkelsen
Østergaard
Berg
Dahl
Bakke
Solberg
Lahti
Laine
Koskinen
Järvinen
Salminen
Lehtonen
Nieminen
Tamm
Saar
Sepp
Kask
Bērziņš
Kalniņš
Ozoliņš
Kazlauskas
Jankauskas
Petrauskas
Einarsdóttir
Magnússon
Stefánsdóttir
Gunnarsson
Agrawal
Bhatt
Chaudhary
Dubey
Pandey
Tiwari
Mishra
Yadav
Thakur
Rao
Naidu
Raju
Hegde
Kamath
Bhat
Gowda
Chandran
Rajan
Sundaram
Venkataraman
Ramachandran
Natarajan
Balasubramaniam
Parthasarathy
Das
Sen
Bose
Dutta
Sarkar
Basu
Roy Chowdhury
Grewal
Bains
Sidhu
Randhawa
Ahluwalia
Kohli
Bedi
Sethi
Anand
Khanna
Bajwa
Cheema
Chaudhry
Sheikh
Baig
Hashmi
Naqvi
Jafri
Zaidi
Alam
Sarker
Miah
Begum
Perera
Jayasuriya
Wickramasinghe
Bandara
Dissanayake
Gunawardena
Ranasinghe
Shrestha
Gurung
Tamang
Thapa
Rai
Adhikari
Sherpa
Limbu
Lama
Tshering
Dorji
Wangchuk
Ogawa
Okada
Maeda
Fujii
Nishimura
Fukuda
Ota
Miura
Takeuchi
Nakajima
Ishii
Hasegawa
Kondo
Mori
Aoki
Endo
Kimura
Yamaguchi
Matsuda
Kikuchi
Hirano
Uchida
Han
Seo
Jang
Lim
Yoo
Jeon
Nam
Ko
Heo
Gao
Luo
Zhu
Hu
Guo
Lin
Feng
Cao
Peng
Zeng
Xu
Lu
Dong
Yuan
Du
Cheng
Lam
Chan
Ng
Ho
Yip
Fung
Tse
Lau
Phan
Vu
Dang
Duong
Ly
Mai
Dinh
Truong
Villareal
Mercado
Ramos
Manalo
Pascual
Dizon
Lacson
Soriano
Salonga
Macaraeg
Sison
Mangubat
Del Mundo
De Guzman
Sy
Ong
Teo
Goh
Koh
Chua
Yeo
Ismail
Osman
Yusof
Hamid
Rahim
Wijaya
Santoso
Susanto
Kusuma
Hidayat
Setiawan
Nugroho
Pratama
Saputra
Siregar
Nasution
Sinaga
Simanjuntak
Lubis
Harahap
Sitompul
Srisuk
Wongsa
Boonmee
Rattanakorn
Suksawat
Sok
Chea
Heng
Kong
Htun
Phommachanh
Vongsa
Keita
Traoré
Diallo
Camara
Touré
Coulibaly
Konaté
Sissoko
Diop
Ndiaye
Sow
Gueye
Mbaye
Faye
Kane
Bah
Barry
Sangaré
Ouédraogo
Kaboré
Sawadogo
Zongo
Agbodjan
Amegah
Gbedemah
Tetteh
Addo
Ansah
Darko
Ofori
Osei
Boakye
Sarpong
Antwi
Nkrumah
Adjei
Ogunbiyi
Olatunji
Ogundipe
Akinwande
Oyelaran
Ajayi
Babalola
Fashola
Oyedepo
Eze
Obi
Nwafor
Igwe
Okoro
Chukwu
Ugwu
Bello-Osagie
Musa
Sani
Aliyu
Lawal
Nwoye
Mbeki
Zuma
Khumalo
Ngcobo
Mthembu
Zulu
Sithole
Nkosi
Mahlangu
Mabaso
Cele
Maseko
Molefe
Moloi
Sibiya
Botha
Pretorius
Steyn
Venter
Coetzee
Nel
Kruger
Fourie
Joubert
Van Wyk
Potgieter
Mutasa
Moyo
Ncube
Chikwanha
Sibanda
Chirwa
Banda
Phiri
Mwale
Tembo
Lungu
Mwanza
Zimba
Mutua
Kimani
Onyango
Wafula
Kiptoo
Chepkoech
Rotich
Kipchoge
Mugo
Ndungu
Mutai
Ssali
Kiggundu
Nakamya
Okot
Opio
Uwimana
Niyonzima
Nshimiyimana
Kibet
Haile
Girma
Alemu
Worku
Kebede
Abebe
Wolde
Tessema
Gebreyesus
Asfaw
Berhane
Mohamud
Farah
Jama
Abdi
Ali
Hersi
Egal
Abdelrahman
El-Amin
Al-Khouri
Abu-Ghazaleh
Al-Najjar
Ben Ali
Ben Youssef
Benali
Bouazizi
Belkacem
Boumediene
Cherif
Mansouri
Trabelsi
Jebali
Chaouch
El Idrissi
Alaoui
Bennani
Tazi
Berrada
Fassi
Amrani
Lahlou
Chraibi
El Fassi
Aziz
Hakimi
Sabbagh
Tannous
Karam
Sfeir
Gemayel
Frangieh
Aoun
Chamoun
Asmar
Zogby
Shaheen
Halabi
Qasim
Obeidat
Tamimi
Masri
Nabulsi
Jarrah
Al-Qasimi
Al-Maktoum
Al-Thani
Al-Sabah
Al-Otaibi
Al-Ghamdi
Al-Zahrani
Al-Harbi
Al-Shehri
Bakr
Farouk
Mostafa
Abdel-Nour
Shenouda
Ghali
Boutros
Girgis
Hanna
Naguib
Soliman
Tawfik
Zaki
Moradi
Bagheri
Nazari
Mousavi
Rezaei
Farahani
Esfahani
Khorasani
Tabrizi
Amini
Ebrahimi
Nouri
Yazdani
Sharifi
Parvizi
Dehghan
Rahmani
Akbari
Yüksel
Aksoy
Koç
Kurt
Özkan
Polat
Çetin
Kara
Güneş
Tekin
Ateş
Bulut
Keskin
Uçar
Acar
Aktaş
Avcı
Erdem
Toprak
Sarı
Tüfekçi
López Obrador
Rodríguez Zapatero
García Márquez
Sánchez-Vicario
Ortiz de Zárate
Pérez de Cuéllar
Ruiz-Tagle
Cárdenas
Peralta
Calderón
Fuentes
Gallardo
Lozano
Mejía
Osorio
Paredes
Rangel
Trujillo
Valencia
Zúñiga
Acosta
Benavides
Palacios
Roldán
Santana
Solís
Vallejo
Mamani
Condori
Choque
Huanca
Apaza
Ticona
Coaquira
Cusi
Machaca
Cahuana
Chambi
Akana
Kahale
Kamakau
Kanahele
Keawe
Nakoa
Palakiko
Fonoti
Tuilagi
Faleolo
Leota
Taufa
Fifita
Tupou
Vaipulu
Havili
Tuala
Aumua
Vainikolo
Tuipulotu
Naufahu
Tamatea
Parata
Horomona
Rewiti
Te Whata
Tipene
Hohaia
Paki
Pomare
Tapsell
Whaanga
Yellowhorse
Manuelito
Tso
Nez
Chee
Etsitty
Tsinajinnie
Bitsui
Redhouse
Silversmith
Deschenie
Lente
Sixkiller
Crowe
Blackfeather
Two Bulls
Iron Shell
Little Wolf
Spotted Elk
Many Horses
Yellow Robe
Kills Crow
Whitehorse
Bear Heart
Eagle Shield
Tallchief
Nakai
Attakai
Kuptana
Qitsualik
Arnaquq
Kusugak
Angutikjuaq
""")

# cities and towns worldwide
CITIES_MORE3 = words("""
Lisbon
Porto
Braga
Faro
Aveiro
Funchal
Ponta Delgada
Vila Nova de Gaia
Setúbal
Évora
Viseu
A Coruña
Santiago de Compostela
Vigo
Oviedo
Gijón
Santander
Pamplona
Vitoria-Gasteiz
Donostia
Girona
Tarragona
Lleida
Castellón de la Plana
Alicante
Murcia
Cartagena
Almería
Granada
Jaén
Huelva
Jerez de la Frontera
Badajoz
Cáceres
Albacete
Ciudad Real
Burgos
Segovia
Ávila
Palma de Mallorca
Las Palmas de Gran Canaria
Santa Cruz de Tenerife
Lyon
Nantes
Lille
Rennes
Reims
Le Havre
Grenoble
Dijon
Nîmes
Clermont-Ferrand
Le Mans
Brest
Amiens
Limoges
Perpignan
Metz
Besançon
Orléans
Rouen
Caen
Avignon
Poitiers
La Rochelle
Bayonne
Ajaccio
Boulogne-Billancourt
Fort-de-France
Pointe-à-Pitre
Cayenne
Bruxelles
Gent
Brugge
Leuven
Namur
Charleroi
Mechelen
Hasselt
Luxembourg
Esch-sur-Alzette
Amsterdam
Den Haag
Haarlem
Leiden
Delft
Maastricht
Nijmegen
Arnhem
Tilburg
Breda
Zwolle
Leeuwarden
Enschede
Almere
Berlin
Bremen
Dresden
Dortmund
Essen
Duisburg
Bochum
Wuppertal
Bielefeld
Bonn
Münster
Mannheim
Karlsruhe
Augsburg
Wiesbaden
Freiburg im Breisgau
Heidelberg
Regensburg
Würzburg
Göttingen
Kiel
Lübeck
Rostock
Magdeburg
Erfurt
Jena
Halle an der Saale
Chemnitz
Potsdam
Saarbrücken
Mainz
Kassel
Osnabrück
Oldenburg
Braunschweig
Ulm
Wien
Graz
Linz
Klagenfurt
Bregenz
Sankt Pölten
Basel
Bern
Luzern
Winterthur
St. Gallen
Lugano
Biel
Fribourg
Neuchâtel
Vaduz
Roma
Milano
Napoli
Torino
Firenze
Venezia
Genova
Bari
Catania
Messina
Padova
Trieste
Brescia
Parma
Modena
Reggio Emilia
Reggio Calabria
Perugia
Cagliari
Sassari
Pescara
Ancona
Bergamo
Lecce
Salerno
Trento
Bolzano
Udine
Pisa
Siena
Rimini
Ravenna
Warszawa
Lublin
Rzeszów
Toruń
Bydgoszcz
Gdynia
Olsztyn
Opole
Kielce
Zielona Góra
Praha
Ostrava
Liberec
Hradec Králové
Pardubice
Zlín
Bratislava
Žilina
Banská Bystrica
Nitra
Prešov
Budapest
Miskolc
Székesfehérvár
Kecskemét
Nyíregyháza
București
Cluj-Napoca
Timișoara
Iași
Constanța
Brașov
Sibiu
Oradea
Craiova
Chișinău
Plovdiv
Varna
Burgas
Beograd
Novi Sad
Niš
Kragujevac
Zagreb
Rijeka
Osijek
Zadar
Dubrovnik
Sarajevo
Mostar
Banja Luka
Tuzla
Podgorica
Skopje
Bitola
Ohrid
Tirana
Durrës
Shkodër
Prishtina
Athens
Patra
Larissa
Volos
Ioannina
Chania
Rhodes
Nicosia
Limassol
Larnaca
Valletta
Sliema
Istanbul
Ankara
Bursa
Antalya
Adana
Konya
Gaziantep
Diyarbakır
Eskişehir
Trabzon
Samsun
Tbilisi
Kutaisi
Batumi
Yerevan
Gyumri
Baku
Almaty
Astana
Shymkent
Karaganda
Tashkent
Samarkand
Bukhara
Bishkek
Osh
Dushanbe
Ashgabat
Ulaanbaatar
Moscow
Novosibirsk
Yekaterinburg
Kazan
Nizhny Novgorod
Samara
Rostov-na-Donu
Krasnoyarsk
Vladivostok
Irkutsk
Murmansk
Kaliningrad
Kyiv
Kharkiv
Odesa
Dnipro
Lviv
Zaporizhzhia
Vinnytsia
Minsk
Hrodna
Vilnius
Kaunas
Klaipėda
Rīga
Daugavpils
Tallinn
Tartu
Helsinki
Espoo
Turku
Oulu
Kuopio
Stockholm
Västerås
Helsingborg
Norrköping
Umeå
Luleå
Kiruna
Oslo
Bergen
Drammen
Kristiansand
Bodø
København
Esbjerg
Roskilde
Tórshavn
Nuuk
Hafnarfjörður
Beirut
Tripoli
Sidon
Damascus
Aleppo
Homs
Amman
Irbid
Zarqa
Jerusalem
Tel Aviv
Haifa
Be'er Sheva
Nazareth
Ramallah
Nablus
Gaza
Cairo
Alexandria
Giza
Luxor
Aswan
Port Said
Tanta
Mansoura
Khartoum
Omdurman
Tunis
Sfax
Sousse
Algiers
Oran
Constantine
Annaba
Tlemcen
Rabat
Casablanca
Marrakech
Fès
Tangier
Agadir
Meknès
Oujda
Nouakchott
Dakar
Thiès
Saint-Louis
Ziguinchor
Bamako
Ségou
Niamey
Ouagadougou
Bobo-Dioulasso
Conakry
Freetown
Monrovia
Abidjan
Yamoussoukro
Bouaké
Kumasi
Tamale
Takoradi
Cape Coast
Lomé
Cotonou
Porto-Novo
Kano
Kaduna
Jos
Enugu
Uyo
Warri
Sokoto
Akure
Osogbo
Douala
Yaoundé
Bamenda
Libreville
Brazzaville
Kinshasa
Lubumbashi
Goma
Bukavu
Kisangani
Luanda
Huambo
Lobito
Windhoek
Gaborone
Francistown
Lusaka
Ndola
Kitwe
Livingstone
Harare
Bulawayo
Mutare
Lilongwe
Blantyre
Zomba
Maputo
Beira
Nampula
Antananarivo
Toamasina
Port Louis
Johannesburg
Pretoria
Cape Town
Port Elizabeth
Gqeberha
Bloemfontein
East London
Pietermaritzburg
Polokwane
Mbombela
Kimberley
Soweto
Stellenbosch
Maseru
Mbabane
Dar es Salaam
Dodoma
Arusha
Zanzibar City
Moshi
Mombasa
Kisumu
Nakuru
Eldoret
Thika
Machakos
Entebbe
Gulu
Jinja
Mbarara
Kigali
Huye
Bujumbura
Gitega
Addis Ababa
Dire Dawa
Mekelle
Gondar
Bahir Dar
Hawassa
Asmara
Djibouti City
Mogadishu
Hargeisa
Kismayo
Karachi
Lahore
Islamabad
Rawalpindi
Faisalabad
Multan
Peshawar
Quetta
Sialkot
Gujranwala
Dhaka
Chittagong
Khulna
Rajshahi
Sylhet
Kathmandu
Pokhara
Lalitpur
Biratnagar
Thimphu
Kandy
Galle
Jaffna
Negombo
New Delhi
Surat
Indore
Patna
Ranchi
Raipur
Dehradun
Shimla
Srinagar
Jammu
Jodhpur
Udaipur
Ajmer
Agra
Meerut
Allahabad
Prayagraj
Gorakhpur
Nashik
Aurangabad
Kolhapur
Mangaluru
Hubballi
Belagavi
Vijayawada
Guntur
Tirupati
Warangal
Tiruchirappalli
Puducherry
Kozhikode
Thrissur
Kollam
Panaji
Imphal
Shillong
Aizawl
Kohima
Agartala
Gangtok
Dibrugarh
Siliguri
Durgapur
Cuttack
Jamshedpur
Dhanbad
Beijing
Shanghai
Guangzhou
Shenzhen
Tianjin
Chongqing
Chengdu
Wuhan
Xi'an
Nanjing
Hangzhou
Suzhou
Shenyang
Harbin
Changchun
Dalian
Qingdao
Jinan
Zhengzhou
Changsha
Kunming
Guiyang
Nanning
Fuzhou
Xiamen
Hefei
Nanchang
Taiyuan
Shijiazhuang
Hohhot
Lanzhou
Xining
Yinchuan
Ürümqi
Lhasa
Haikou
Sanya
Hong Kong
Kowloon
Macau
Taipei
Kaohsiung
Taichung
Tainan
Hsinchu
Keelung
Seoul
Incheon
Gwangju
Daejeon
Ulsan
Suwon
Changwon
Jeonju
Cheongju
Pohang
Gyeongju
Jeju City
Chuncheon
Pyongyang
Tokyo
Yokohama
Nagoya
Kobe
Kyoto
Fukuoka
Kawasaki
Saitama
Hiroshima
Sendai
Kitakyushu
Chiba
Niigata
Hamamatsu
Kumamoto
Okayama
Kagoshima
Naha
Kanazawa
Nagasaki
Matsuyama
Utsunomiya
Gifu
Nara
Aomori
Morioka
Akita
Hakodate
Asahikawa
Ho Chi Minh City
Hai Phong
Can Tho
Nha Trang
Vung Tau
Bien Hoa
Quy Nhon
Bangkok
Chiang Mai
Chiang Rai
Khon Kaen
Nakhon Ratchasima
Udon Thani
Hat Yai
Phuket
Pattaya
Vientiane
Luang Prabang
Phnom Penh
Siem Reap
Battambang
Yangon
Mandalay
Naypyidaw
Kuala Lumpur
George Town
Ipoh
Johor Bahru
Kota Kinabalu
Kuching
Malacca
Shah Alam
Singapore
Bandar Seri Begawan
Jakarta
Surabaya
Bandung
Medan
Semarang
Makassar
Palembang
Denpasar
Yogyakarta
Malang
Balikpapan
Manado
Padang
Pontianak
Banda Aceh
Dili
Manila
Quezon City
Cebu City
Davao City
Iloilo City
Bacolod
Cagayan de Oro
Zamboanga City
Baguio
Tacloban
Angeles City
Port Moresby
Lae
Suva
Nadi
Lautoka
Apia
Nukuʻalofa
Port Vila
Honiara
Nouméa
Papeete
Tarawa
Majuro
Hagåtña
Perth
Adelaide
Sydney
Darwin
Cairns
Newcastle
Gold Coast
Sunshine Coast
Mackay
Rockhampton
Bundaberg
Mildura
Albury
Dubbo
Tamworth
Armidale
Port Macquarie
Coffs Harbour
Broken Hill
Kalgoorlie
Bunbury
Geraldton
Mount Gambier
Devonport
Napier
Hastings
Blenheim
Timaru
Oamaru
Whakatāne
Taupō
Kaikōura
Greymouth
Havana
Santiago de Cuba
Camagüey
Holguín
Santo Domingo
Santiago de los Caballeros
Port-au-Prince
Cap-Haïtien
Montego Bay
San Juan
Ponce
Mayagüez
Bridgetown
Port of Spain
San Fernando
Nassau
Freeport
Castries
Roseau
Basseterre
St. George's
Willemstad
Oranjestad
Belize City
Guatemala City
Quetzaltenango
Antigua Guatemala
San Salvador
Santa Ana
Tegucigalpa
San Pedro Sula
Managua
Limón
Panama City
Caracas
Maracaibo
Barquisimeto
Cali
Barranquilla
Cartagena de Indias
Bucaramanga
Manizales
Santa Marta
Cúcuta
Villavicencio
Pasto
Quito
Guayaquil
Cuenca
Ambato
Loja
Lima
Arequipa
Chiclayo
Cusco
Iquitos
Piura
Puno
Huancayo
La Paz
El Alto
Santa Cruz de la Sierra
Cochabamba
Sucre
Potosí
Oruro
Asunción
Ciudad del Este
Montevideo
Salto
Paysandú
Punta del Este
Buenos Aires
La Plata
Mar del Plata
San Miguel de Tucumán
Salta
Santa Fe de la Vera Cruz
Bahía Blanca
Neuquén
Ushuaia
Bariloche
Resistencia
Posadas
Corrientes
Santiago de Chile
Valparaíso
Viña del Mar
Antofagasta
Temuco
Iquique
Arica
Punta Arenas
Puerto Montt
Rio de Janeiro
Brasília
Salvador
Fortaleza
Belo Horizonte
Manaus
Curitiba
Recife
Porto Alegre
Belém
Goiânia
Guarulhos
Campinas
São Luís
Maceió
Teresina
Campo Grande
João Pessoa
Florianópolis
Cuiabá
Aracaju
Londrina
Juiz de Fora
Ribeirão Preto
Uberlândia
Sorocaba
Niterói
Porto Velho
Macapá
Boa Vista
Rio Branco
Palmas
Petrópolis
Foz do Iguaçu
Paramaribo
Puebla
Veracruz
Xalapa
Villahermosa
Tuxtla Gutiérrez
San Cristóbal de las Casas
Campeche
Chetumal
Chihuahua
Saltillo
Torreón
Tampico
Matamoros
Nuevo Laredo
Zacatecas
Tepic
Colima
Irapuato
Celaya
Pachuca
Cuernavaca
Tlaxcala
Los Cabos
Puerto Vallarta
Mexicali
Nogales
Guanajuato
San Miguel de Allende
Taxco
Tulum
Playa del Carmen
""")

# street names without the street type
STREET_NAMES_MORE3 = words("""
Acacia
Alameda
Almond
Amberwood
Anchor
Andover
Appleton
Arbor
Arden
Ashbury
Autumn Leaf
Avalon
Balsam
Bancroft
Barberry
Bayshore
Beechwood
Bellevue
Belmont
Benton
Birchwood
Blackberry
Blue Heron
Bonnie Brae
Bramblewood
Brentwood
Briar Patch
Brighton
Brookfield
Buckthorn
Burnside
Butternut
Calloway
Cambridge
Camden
Cardinal
Carlisle
Castleton
Catalpa
Chadwick
Chapel Hill
Charter Oak
Chelsea
Cherokee Rose
Chickadee
Claremont
Clearview
Clover
Coachman
Colonial
Concord Grove
Coral
Cornflower
Cotswold
Covington
Cricket Hollow
Crossroads
Dahlia
Dandelion
Davenport
Deerfield
Dove
Dunmore
Eastwood
Edgemont
Edgewood
Elderwood
Ellsworth
Emerson
Fairfax
Fernwood
Finch
Firethorn
Fletcher
Forest Glen
Foxwood
Garrison
Gateway
Gingerbread
Glenview
Goldenrod
Grandview
Greenbriar
Greenleaf
Hampton
Harbour Town
Hartwell
Hazelwood
Hearthstone
Heritage
Heron Bay
Hickory Hill
Hollyhock
Homestead
Hummingbird
Huntington
Indian Creek
Ivy
Jasmine
Kestrel
Kingsway
Knollwood
Lancaster
Lantern
Lavender
Lexington Green
Lilac
Lindenwood
Marigold
Mayflower
Mill Creek
Montclair
Moss Rock
Mountain View
Myrtle
Northgate
Oak Hollow
Oakdale
Olive
Orchid
Osprey
Overlook
Oxbow
Palisade
Parkside
Partridge
Peregrine
Periwinkle
Pheasant
Pinecone
Plantation
Plum
Pond View
Quail Ridge
Quince
Raintree
Raven
Redwood Grove
Regency
Ridgeway
Rolling Hills
Rosemary
Saddlebrook
Sagebrush
Salem Church
Sandalwood
Sandstone
Saratoga
Shenandoah
Silver Lake
Skyline
Sparrow
Stonehaven
Stratford
Sugarloaf
Sumac
Sunflower
Tall Pines
Teakwood
Thornberry
Timber Ridge
Trillium
Tulip
Twin Lakes
Valley Forge
Verbena
Village Green
Vineyard
Waverly
Westminster
White Oak
Wildflower
Winding Brook
Windsor
Wintergreen
Wren
Yarrow
Yellowstone
Zinnia
Rue de Rivoli
Via Roma
Calle Mayor
Unter den Linden
Avenida Paulista
Paseo de la Reforma
Gran Vía
Rambla de Catalunya
Via del Corso
Champs-Élysées
Kurfürstendamm
Nowy Świat
Váci
Nevsky
Strøget
Drottninggatan
Karl Johans
Grafton
O'Connell
Princes
Sauchiehall
Portobello
Sukhumvit
Nathan
Ginza
Omotesando
Myeongdong
Insadong
Chandni Chowk
Brigade
Avenida Atlântica
Rua Augusta
Avenida da Liberdade
Calle Florida
Avenida de Mayo
Malecón
Calle Ocho
Rue Saint-Jacques
Sherbrooke Ouest
Yonge
Bloor
Granville
Robson
Jasper
Portage
Spadina
Dundas
Queen Anne
Swanston
Bourke
Pitt
Lambton Quay
Cuba
Ponsonby
Karangahape
""")

# first parts of hospital and clinic names
HOSPITAL_HEADS_MORE3 = words("""
Saint Joseph Mercy
Saint Mary Mercy
St. Charles
Saint Cloud
St. Helena
Saint John's
Saint Margaret's
St. Teresa's
Saint Benedict's
St. Ann's
Saint Monica's
St. Paul's
Saint Andrew's
St. Columba's
Saint Brigid's
St. Gabriel's
Saint Ignatius
St. Augustine's
Saint Camillus
St. Rose
Saint Cecilia's
Our Lady of Mercy
Our Lady of the Lake
Our Lady of Peace
Our Lady of Fatima
Holy Redeemer
Holy Spirit
Holy Trinity
Immaculate Conception
Precious Blood
Christ the King
Blessed Sacrament
Hope Valley
Covenant
Shepherd's Hill
Samaritan Valley
Hadassah
Shaare Zedek
Rambam
Sheba
Montefiore
Maimonides
Beth Shalom
Mount Zion
Barnes-Jewish
Cedars
Brigham
Dartmouth-Hitchcock
Geisinger
Intermountain
Sentara
Ochsner
Scripps
Baylor Scott
Legacy Emanuel
Northwell
Atrium
Novant
Adventist
Carilion
Guthrie
Bassett
Marshfield
Essentia
Sanford
Avera
Altru
Renown
Banner
HonorHealth
Loma Linda
Hoag
Torrance
Citrus Valley
Emerald Coast
Coral Springs
Palm Beach
Blue Water
Great Lakes
North Shore
South Shore
Mountain Vista
Canyon View
Red Rock
Copper Basin
Desert View
Pacific Crest
Sound View
Eastside
Westside
Midtown
Uptown
Downtown
Lowcountry
Bluegrass
Heartland
Prairie Ridge
Cornerstone
Pinnacle
Aurora
Horizon
Keystone
Harmony
Haven
Unity
Frontier
Wessex
Royal Victoria
Royal Alexandra
Princess Margaret
Queen Elizabeth
King Edward
Charité
Karolinska
Rigshospitalet
Salpêtrière
Pitié
Hôtel-Dieu
Gemelli
Vall d'Hebron
Gregorio Marañón
Santa Maria
São João
Albert Einstein
Sírio-Libanês
Groote Schuur
Chris Hani Baragwanath
Korle Bu
Kenyatta
Mulago
Aga Khan
Apollo
Fortis
Manipal
Narayana
Tata Memorial
Lilavati
Siriraj
Raffles
Tan Tock Seng
Queen Mary
Prince of Wales
Royal North Shore
Westmead
Starship
Middlemore
""")


CONDITIONS_MORE3 = words("""
acute systolic heart failure
acute diastolic heart failure
chronic systolic heart failure
paroxysmal atrial fibrillation
persistent atrial fibrillation
permanent atrial fibrillation
atrial fibrillation with RVR
multifocal atrial tachycardia
nonsustained ventricular tachycardia
torsades de pointes
Mobitz type II block
Brugada syndrome
premature ventricular contractions
PVCs
bicuspid aortic valve
severe aortic stenosis
moderate mitral regurgitation
infective endocarditis
prosthetic valve endocarditis
constrictive pericarditis
Dressler syndrome
left ventricular thrombus
left ventricular hypertrophy
LVH
coronary vasospasm
Prinzmetal angina
spontaneous coronary artery dissection
in-stent restenosis
peripartum cardiomyopathy
cardiac amyloidosis
cardiac sarcoidosis
postural orthostatic tachycardia syndrome
POTS
uncontrolled hypertension
resistant hypertension
essential hypertension
secondary hypertension
hypertensive heart disease
hypertensive crisis
subclavian steal syndrome
thoracic outlet syndrome
May-Thurner syndrome
phlegmasia cerulea dolens
upper extremity DVT
provoked DVT
bilateral pulmonary emboli
saddle pulmonary embolism
submassive pulmonary embolism
chronic thromboembolic pulmonary hypertension
carotid artery stenosis
mesenteric ischemia
acute limb ischemia
Buerger disease
fibromuscular dysplasia
Takayasu arteritis
lymphedema
moderate persistent asthma
mild intermittent asthma
exercise-induced bronchospasm
reactive airway disease
allergic bronchopulmonary aspergillosis
hypersensitivity pneumonitis
organizing pneumonia
eosinophilic pneumonia
multilobar pneumonia
right lower lobe pneumonia
COVID-19 pneumonia
MRSA pneumonia
Legionnaires' disease
Mycoplasma pneumonia
MAC lung disease
silicosis
asbestosis
pneumoconiosis
alpha-1 antitrypsin deficiency
lymphangioleiomyomatosis
spontaneous pneumothorax
chylothorax
parapneumonic effusion
loculated pleural effusion
ground-glass opacities
chronic hypoxemic respiratory failure
acute chest syndrome
central sleep apnea
severe obstructive sleep apnea
upper airway cough syndrome
tracheomalacia
subglottic stenosis
vocal cord dysfunction
lung adenocarcinoma
squamous cell lung cancer
Lofgren syndrome
Zenker diverticulum
esophageal stricture
Schatzki ring
Boerhaave syndrome
pill esophagitis
Candida esophagitis
erosive esophagitis
duodenal ulcer
gastric ulcer
bleeding duodenal ulcer
NSAID-induced gastropathy
gastric outlet obstruction
Zollinger-Ellison syndrome
dumping syndrome
cyclic vomiting syndrome
cannabinoid hyperemesis syndrome
small intestinal bacterial overgrowth
SIBO
lactose intolerance
IBS with constipation
IBS-D
Crohn's ileitis
perianal Crohn's disease
pancolitis
ulcerative proctitis
toxic megacolon
pseudomembranous colitis
radiation proctitis
angiodysplasia
Dieulafoy lesion
Ogilvie syndrome
cecal volvulus
perforated diverticulitis
diverticular bleed
anal cancer
thrombosed external hemorrhoid
internal hemorrhoids
rectal prolapse
colon polyp
tubular adenoma
sessile serrated adenoma
Lynch syndrome
familial adenomatous polyposis
alcoholic cirrhosis
decompensated cirrhosis
hepatorenal syndrome
hepatopulmonary syndrome
acute liver failure
drug-induced liver injury
ischemic hepatitis
chronic hepatitis B
hepatic steatosis
MASLD
liver abscess
hepatic hemangioma
Budd-Chiari syndrome
gallstone pancreatitis
necrotizing pancreatitis
acalculous cholecystitis
gallbladder polyp
biliary stricture
Gilbert syndrome
exocrine pancreatic insufficiency
autoimmune pancreatitis
IPMN
CKD stage 5
CKD stage 3a
CKD stage 3b
acute tubular necrosis
ATN
prerenal azotemia
contrast-induced nephropathy
hypertensive nephrosclerosis
membranous nephropathy
minimal change disease
focal segmental glomerulosclerosis
FSGS
lupus nephritis
Alport syndrome
renal tubular acidosis
nephrogenic diabetes insipidus
bilateral hydronephrosis
obstructing ureteral stone
staghorn calculus
renal cyst
angiomyolipoma
emphysematous pyelonephritis
perinephric abscess
recurrent UTIs
catheter-associated UTI
asymptomatic bacteriuria
gross hematuria
microscopic hematuria
chronic prostatitis
elevated PSA
Peyronie disease
priapism
Fournier gangrene
paraphimosis
mixed urinary incontinence
urge incontinence
pelvic organ prolapse
cystocele
rectocele
vesicoureteral reflux
posterior urethral valves
type 2 diabetes with hyperglycemia
type 2 diabetes with neuropathy
uncontrolled type 2 diabetes
insulin-dependent diabetes
LADA
maturity-onset diabetes of the young
steroid-induced hyperglycemia
euglycemic DKA
diabetic gastroparesis
hypoglycemia unawareness
toxic multinodular goiter
toxic adenoma
subacute thyroiditis
postpartum thyroiditis
thyroid eye disease
Graves ophthalmopathy
medullary thyroid carcinoma
follicular thyroid carcinoma
anaplastic thyroid carcinoma
euthyroid sick syndrome
adrenal incidentaloma
adrenal crisis
congenital adrenal hyperplasia
hyperprolactinemia
panhypopituitarism
Sheehan syndrome
central diabetes insipidus
multiple endocrine neoplasia
insulinoma
Klinefelter syndrome
Turner syndrome
secondary adrenal insufficiency
mixed hyperlipidemia
hyperuricemia
tophaceous gout
acute gout flare
podagra
Paget disease of bone
osteomalacia
rickets
scurvy
Wernicke encephalopathy
Korsakoff syndrome
refeeding syndrome
protein-calorie malnutrition
severe protein-calorie malnutrition
dehydration
hypovolemia
volume overload
lactic acidosis
hyperammonemia
hyperchloremic metabolic acidosis
respiratory alkalosis
left MCA stroke
right MCA stroke
lacunar infarct
cerebellar stroke
posterior circulation stroke
cardioembolic stroke
cerebral venous sinus thrombosis
intraventricular hemorrhage
cerebral aneurysm
arteriovenous malformation
reversible cerebral vasoconstriction syndrome
posterior reversible encephalopathy syndrome
PRES
moyamoya disease
chronic subdural hematoma
diffuse axonal injury
post-concussion syndrome
generalized tonic-clonic seizure
juvenile myoclonic epilepsy
temporal lobe epilepsy
psychogenic nonepileptic seizures
breakthrough seizure
medication overuse headache
chronic migraine
migraine with aura
migraine without aura
idiopathic intracranial hypertension
pseudotumor cerebri
occipital neuralgia
CIDP
relapsing-remitting multiple sclerosis
neuromyelitis optica
transverse myelitis
Lambert-Eaton syndrome
progressive supranuclear palsy
multiple system atrophy
frontotemporal dementia
Creutzfeldt-Jakob disease
tardive dyskinesia
dystonia
cervical dystonia
Tourette syndrome
hemifacial spasm
cubital tunnel syndrome
peroneal nerve palsy
foot drop
meralgia paresthetica
tarsal tunnel syndrome
Morton neuroma
complex regional pain syndrome
CRPS
phantom limb pain
spinal cord injury
central cord syndrome
syringomyelia
Chiari malformation
hydrocephalus
low-grade glioma
vestibular schwannoma
acoustic neuroma
neurocysticercosis
brain abscess
HSV encephalitis
neurosyphilis
treatment-resistant depression
seasonal affective disorder
bipolar I disorder
bipolar II disorder
cyclothymic disorder
acute mania
hypomania
brief psychotic disorder
delusional disorder
agoraphobia
specific phobia
separation anxiety disorder
acute stress disorder
dissociative identity disorder
somatic symptom disorder
conversion disorder
illness anxiety disorder
body dysmorphic disorder
trichotillomania
hoarding disorder
antisocial personality disorder
narcissistic personality disorder
oppositional defiant disorder
intellectual disability
opioid withdrawal
benzodiazepine withdrawal
methamphetamine use disorder
alcohol intoxication
opioid overdose
serotonin syndrome
neuroleptic malignant syndrome
REM sleep behavior disorder
severe sepsis
MSSA bacteremia
gram-negative bacteremia
VRE infection
ESBL E. coli infection
Pseudomonas pneumonia
vertebral osteomyelitis
discitis
spinal epidural abscess
psoas abscess
tubo-ovarian abscess
Ludwig angina
retropharyngeal abscess
dental abscess
periorbital cellulitis
orbital cellulitis
erysipelas
lymphangitis
cat scratch disease
blastomycosis
cryptococcal meningitis
mucormycosis
esophageal candidiasis
toxoplasmosis
giardiasis
strongyloidiasis
norovirus gastroenteritis
Salmonella enteritis
hemolytic uremic syndrome
typhoid fever
leptospirosis
anaplasmosis
ehrlichiosis
babesiosis
rabies
tetanus
mpox
long COVID
hepatitis E
genital warts
condylomata acuminata
secondary syphilis
metastatic prostate cancer
castration-resistant prostate cancer
HER2-positive breast cancer
invasive ductal carcinoma
invasive lobular carcinoma
inflammatory breast cancer
rectal cancer
metastatic colorectal cancer
gallbladder cancer
urothelial carcinoma
clear cell renal cell carcinoma
seminoma
oropharyngeal cancer
thymoma
cutaneous T-cell lymphoma
mycosis fungoides
Burkitt lymphoma
marginal zone lymphoma
hairy cell leukemia
AL amyloidosis
smoldering myeloma
hemophagocytic lymphohistiocytosis
Kaposi sarcoma
soft tissue sarcoma
malignant spinal cord compression
superior vena cava syndrome
hypercalcemia of malignancy
chemotherapy-induced peripheral neuropathy
oral mucositis
radiation pneumonitis
immune-related colitis
microcytic anemia
pernicious anemia
alpha thalassemia
sickle cell trait
warm autoimmune hemolytic anemia
cold agglutinin disease
paroxysmal nocturnal hemoglobinuria
hemophilia A
protein C deficiency
prothrombin gene mutation
eosinophilia
methemoglobinemia
iron overload
supratherapeutic INR
dyshidrotic eczema
nummular eczema
perioral dermatitis
lichen sclerosus
prurigo nodularis
plaque psoriasis
guttate psoriasis
acne vulgaris
melasma
dysplastic nevus
keratoacanthoma
Bowen disease
nodular basal cell carcinoma
lentigo maligna
dermatofibroma
cherry angioma
pyogenic granuloma
skin tag
tinea capitis
tinea cruris
herpes labialis
erythema nodosum
pyoderma gangrenosum
granuloma annulare
discoid lupus
chronic urticaria
morbilliform drug eruption
DRESS syndrome
toxic epidermal necrolysis
second-degree burn
frostbite
hyperhidrosis
telogen effluvium
bilateral knee osteoarthritis
osteoarthritis of the left hip
erosive osteoarthritis
adult-onset Still disease
CPPD
subacromial bursitis
shoulder impingement syndrome
biceps tendinitis
SLAP tear
hip labral tear
femoroacetabular impingement
greater trochanteric pain syndrome
iliotibial band syndrome
patellar tendinitis
pes anserine bursitis
Baker cyst
prepatellar bursitis
lateral meniscus tear
chondromalacia patellae
medial tibial stress syndrome
posterior tibial tendon dysfunction
high ankle sprain
Lisfranc injury
Jones fracture
Colles fracture
radial head fracture
supracondylar humerus fracture
mallet finger
ganglion cyst
nursemaid's elbow
odontoid fracture
foraminal stenosis
lumbar spondylosis
cervical spondylosis
facet arthropathy
sacroiliitis
coccydynia
piriformis syndrome
myofascial pain syndrome
Marfan syndrome
Ehlers-Danlos syndrome
threatened abortion
missed abortion
cervical insufficiency
oligohydramnios
polyhydramnios
intrauterine growth restriction
breech presentation
preeclampsia with severe features
placenta accreta
shoulder dystocia
uterine atony
retained placenta
postpartum endometritis
adenomyosis
endometrial hyperplasia
Bartholin gland abscess
atrophic vaginitis
cervicitis
premenstrual dysphoric disorder
premature ovarian insufficiency
hirsutism
galactorrhea
fibrocystic breast disease
gynecomastia
RSV bronchiolitis
transient tachypnea of the newborn
neonatal sepsis
neonatal abstinence syndrome
hypoxic-ischemic encephalopathy
retinopathy of prematurity
developmental dysplasia of the hip
clubfoot
Hirschsprung disease
Meckel diverticulum
biliary atresia
cleft palate
craniosynostosis
spina bifida
herpangina
Henoch-Schonlein purpura
MIS-C
Duchenne muscular dystrophy
spinal muscular atrophy
phenylketonuria
proliferative diabetic retinopathy
wet macular degeneration
vitreous hemorrhage
posterior vitreous detachment
epiretinal membrane
macular hole
central serous chorioretinopathy
anterior uveitis
scleritis
episcleritis
herpes zoster ophthalmicus
corneal ulcer
dacryocystitis
nasolacrimal duct obstruction
ectropion
entropion
ocular hypertension
nystagmus
homonymous hemianopia
sudden sensorineural hearing loss
otosclerosis
otitis media with effusion
mastoiditis
acute bacterial sinusitis
allergic fungal sinusitis
vocal cord nodules
laryngopharyngeal reflux
adenoid hypertrophy
sialolithiasis
aphthous ulcer
oral leukoplakia
dental caries
periodontitis
substernal chest pain
atypical chest pain
exertional chest pain
unilateral leg swelling
right-sided weakness
facial droop
slurred speech
amaurosis fugax
nuchal rigidity
hyperreflexia
asterixis
fasciculations
muscle cramps
saddle anesthesia
toxic metabolic encephalopathy
poor oral intake
coffee-ground emesis
bloody diarrhea
steatorrhea
tenesmus
rebound tenderness
Murphy sign
scleral icterus
spider angiomas
urinary hesitancy
vaginal discharge
dyspareunia
low-grade fever
fever of unknown origin
crackles
bibasilar crackles
rhonchi
jugular venous distension
JVD
systolic murmur
carotid bruit
absent pedal pulses
hypothermia
heat stroke
anasarca
xerostomia
cold intolerance
anhedonia
auditory hallucinations
homicidal ideation
chronic low back pain
morning stiffness
antalgic gait
mechanical fall
gunshot wound
anaphylaxis
peanut allergy
penicillin allergy
lung mass
hilar lymphadenopathy
cardiomegaly
pulmonary vascular congestion
cavitary lung lesion
pneumoperitoneum
lytic bone lesion
pathologic fracture
small vessel ischemic disease
cerebral edema
QT prolongation
ST elevation
T-wave inversions
transaminitis
hypoalbuminemia
uremia
bandemia
pyuria
microalbuminuria
hypoxemia
hypercapnia
hyperphosphatemia
""")


PROCEDURES_MORE3 = words("""
left total knee arthroplasty
right total knee arthroplasty
left total hip arthroplasty
right total hip arthroplasty
bilateral total knee arthroplasty
anterior approach total hip arthroplasty
robotic-assisted total knee arthroplasty
revision total hip arthroplasty
robotic-assisted prostatectomy
robotic-assisted hysterectomy
BSO
bilateral salpingectomy
hysteroscopic myomectomy
external cephalic version
labor induction
manual removal of placenta
sacrocolpopexy
anterior colporrhaphy
suction curettage
robotic-assisted partial nephrectomy
nephroureterectomy
radical cystectomy
ileal conduit creation
cystolitholapaxy
laser lithotripsy
HoLEP
UroLift procedure
transperineal prostate biopsy
MRI-fusion prostate biopsy
ureteral stent exchange
urethroplasty
penile prosthesis placement
artificial urinary sphincter placement
sacral neuromodulation
intravesical BCG therapy
varicocelectomy
vasectomy reversal
left inguinal hernia repair
right inguinal hernia repair
laparoscopic inguinal hernia repair
robotic ventral hernia repair
component separation
laparoscopic Nissen fundoplication
transoral incisionless fundoplication
magnetic sphincter augmentation
gastrojejunostomy
duodenal switch
intragastric balloon placement
endoscopic sleeve gastroplasty
laparoscopic right hemicolectomy
robotic low anterior resection
subtotal colectomy
total proctocolectomy
ileal pouch-anal anastomosis
loop ileostomy
ileostomy reversal
stricturoplasty
seton placement
transanal excision
Altemeier procedure
laparoscopic rectopexy
excision of thrombosed hemorrhoid
interval appendectomy
hepaticojejunostomy
right hepatectomy
total pancreatectomy
endoscopic cystgastrostomy
EUS-guided fine needle aspiration
endoscopic ultrasound
capsule endoscopy
double-balloon enteroscopy
argon plasma coagulation
endoscopic submucosal dissection
POEM
colonic stent placement
fecal microbiota transplant
anoscopy
high-resolution anoscopy
surveillance colonoscopy
diagnostic colonoscopy
PEG tube replacement
gastrostomy tube exchange
Dobhoff tube placement
median sternotomy
tricuspid valve repair
Ross procedure
Bentall procedure
aortic root replacement
Maze procedure
transcatheter mitral valve repair
balloon aortic valvuloplasty
PFO closure
ASD closure
alcohol septal ablation
Impella placement
temporary pacemaker placement
biventricular pacemaker implantation
subcutaneous ICD implantation
pacemaker generator change
lead extraction
SVT ablation
atrial flutter ablation
VT ablation
cardiac resynchronization therapy
synchronized cardioversion
chemical cardioversion
rotational atherectomy
intravascular lithotripsy
chronic total occlusion PCI
left carotid endarterectomy
TCAR
femoral endarterectomy
femoral-tibial bypass
axillofemoral bypass
right great toe amputation
ray amputation
ambulatory phlebectomy
pseudoaneurysm repair
AV fistula angioplasty
port-a-cath placement
port removal
midline catheter placement
ultrasound-guided peripheral IV placement
intraosseous line placement
cranioplasty
stereotactic brain biopsy
transsphenoidal resection
endoscopic third ventriculostomy
VP shunt revision
deep brain stimulator placement
microvascular decompression
middle meningeal artery embolization
endoscopic carpal tunnel release
cubital tunnel release
ulnar nerve transposition
spinal cord stimulator implantation
intrathecal pump placement
lumbar drain placement
transforaminal epidural steroid injection
epidural blood patch
L4-L5 laminectomy
posterior lumbar fusion
transforaminal lumbar interbody fusion
posterior cervical fusion
cervical laminoplasty
lumbar microdiscectomy
right shoulder arthroscopy
arthroscopic rotator cuff repair
subacromial decompression
biceps tenodesis
Bankart repair
Latarjet procedure
hip arthroscopy
partial meniscectomy
MPFL reconstruction
high tibial osteotomy
quadriceps tendon repair
ankle arthroscopy
ankle fusion
hammertoe correction
Dupuytren fasciectomy
distal radius ORIF
hip hemiarthroplasty
cephalomedullary nailing
irrigation and debridement
bone grafting
viscosupplementation
platelet-rich plasma injection
digital block
hematoma block
Bier block
balloon sinuplasty
septorhinoplasty
stapedectomy
hypoglossal nerve stimulator implantation
microlaryngoscopy
total laryngectomy
thyroid lobectomy
anterior nasal packing
peritonsillar abscess drainage
pneumatic retinopexy
dacryocystorhinostomy
robotic lobectomy
right upper lobectomy
thoracotomy
talc pleurodesis
indwelling pleural catheter placement
navigational bronchoscopy
rigid bronchoscopy
endobronchial valve placement
percutaneous tracheostomy
tracheostomy tube change
thymectomy
Nuss procedure
partial mastectomy
nipple-sparing mastectomy
DIEP flap reconstruction
tissue expander placement
reduction mammaplasty
wire-localized lumpectomy
panniculectomy
full-thickness skin graft
layered closure
staple removal
suture removal
nail avulsion
photodynamic therapy
narrowband UVB phototherapy
CT-guided drain placement
ultrasound-guided paracentesis
large-volume paracentesis
diagnostic thoracentesis
transplant kidney biopsy
thyroid fine needle aspiration
excisional lymph node biopsy
bone biopsy
CT-guided lung biopsy
transjugular liver biopsy
pleural biopsy
vulvar biopsy
bronchial artery embolization
splenic artery embolization
varicocele embolization
portal vein embolization
BRTO
percutaneous transhepatic biliary drainage
PTBD
stereotactic body radiation therapy
Gamma Knife radiosurgery
proton beam therapy
prostate seed implantation
whole breast irradiation
palliative radiation therapy
external beam radiation therapy
total body irradiation
induction chemotherapy
intrathecal chemotherapy
HIPEC
leukapheresis
extracorporeal photopheresis
vestibular rehabilitation
gait training
pelvic floor physical therapy
aquatic therapy
constraint-induced movement therapy
manual lymphatic drainage
dry needling
acupuncture
osteopathic manipulative treatment
TENS therapy
cervical traction
Unna boot application
CPAP therapy
noninvasive positive pressure ventilation
prone positioning
incentive spirometry
bronchial thermoplasty
ultrafiltration
targeted temperature management
EMDR
interpersonal therapy
acceptance and commitment therapy
medication-assisted treatment
bright light therapy
biofeedback
continuous bladder irrigation
wound packing
sharp debridement
frenotomy
pyloromyotomy
Kasai procedure
hypospadias repair
cleft lip repair
Ponseti casting
""")


TESTS_MORE3 = words("""
manual differential
absolute lymphocyte count
absolute eosinophil count
MCH
MCHC
mean platelet volume
sickle cell screen
G6PD level
indirect Coombs test
antibody screen
flow cytometry
JAK2 mutation analysis
BCR-ABL PCR
FISH analysis
karyotype
aPTT
mixing study
factor VIII activity
lupus anticoagulant panel
anticardiolipin antibodies
protein C activity
antithrombin III level
thromboelastography
TEG
serotonin release assay
ADAMTS13 activity
erythropoietin level
thiamine level
zinc level
ceruloplasmin
lead level
carboxyhemoglobin
methemoglobin level
osmolal gap
prealbumin
C3 level
C4 level
quantitative immunoglobulins
total IgE
serum tryptase
skin prick testing
patch testing
anti-Smith antibody
anti-SSA antibody
anti-Scl-70 antibody
anti-centromere antibody
anti-Jo-1 antibody
anti-GBM antibody
anti-PLA2R antibody
p-ANCA
c-ANCA
cryoglobulins
tissue transglutaminase IgA
celiac panel
anti-smooth muscle antibody
antimitochondrial antibody
alpha-1 antitrypsin level
hepatitis B core antibody
hepatitis B surface antibody
HBV DNA
hepatitis A IgM
hepatitis C genotype
fourth-generation HIV test
FTA-ABS
VDRL
Lyme antibody
EBV serology
varicella IgG
Histoplasma urine antigen
cryptococcal antigen
beta-D-glucan
galactomannan
malaria smear
influenza A/B PCR
throat culture
MRSA PCR
GI pathogen panel
fecal elastase
Cologuard
anaerobic culture
AFB culture
pneumococcal urinary antigen
urine microscopy
urine creatinine
fractional excretion of sodium
FENa
24-hour urine collection
urine metanephrines
plasma metanephrines
aldosterone-to-renin ratio
plasma renin activity
late-night salivary cortisol
IGF-1
chromogranin A
5-HIAA
DHEA-S
17-hydroxyprogesterone
anti-Mullerian hormone
free testosterone
semen analysis
thyroid-stimulating immunoglobulin
calcitonin
free PSA
CA 15-3
beta-2 microglobulin
Oncotype DX
PD-L1 testing
EGFR mutation testing
next-generation sequencing
NIPT
quad screen
glucose challenge test
3-hour glucose tolerance test
group B strep screen
Kleihauer-Betke test
fetal fibronectin
newborn screen
transcutaneous bilirubin
electronic fetal monitoring
nuchal translucency scan
CT abdomen without contrast
CT facial bones
CT orbits
CT neck with contrast
CT lumbar spine
CT enterography
CT colonography
CTA runoff
CT venogram
CT myelogram
CT chest abdomen pelvis
triple-phase liver CT
MRI orbits
MRI pituitary
MRI internal auditory canals
MRI right knee
MRI hip
MRI ankle
MRI liver
MR enterography
MR venogram
fetal MRI
functional MRI
two-view chest X-ray
elbow X-ray
forearm X-ray
femur X-ray
tibia-fibula X-ray
thoracic spine X-ray
soft tissue neck X-ray
bone age X-ray
upright abdominal X-ray
upper extremity venous duplex
lower extremity arterial duplex
renal artery duplex
liver Doppler ultrasound
transplant kidney ultrasound
soft tissue ultrasound
cranial ultrasound
FAST exam
point-of-care ultrasound
POCUS
lung ultrasound
limited echocardiogram
bubble study
regadenoson stress test
MUGA scan
FDG PET scan
PSMA PET scan
DaTscan
tagged red blood cell scan
Meckel scan
MAG3 renal scan
parathyroid sestamibi scan
lymphoscintigraphy
esophagram
voiding cystourethrogram
VCUG
retrograde urethrogram
hysterosalpingogram
defecography
MR arthrogram
cardiac telemetry
rhythm strip
pacemaker interrogation
QTc interval
left ventricular ejection fraction
LVEF
pulmonary capillary wedge pressure
cardiac index
mixed venous oxygen saturation
intracranial pressure monitoring
bladder pressure
train-of-four
capnography
plateau pressure
P/F ratio
A-a gradient
spontaneous breathing trial
rapid shallow breathing index
negative inspiratory force
total lung capacity
FEV1/FVC ratio
lung volumes
FeNO
overnight oximetry
CPAP titration study
ambulatory EEG
somatosensory evoked potentials
CSF oligoclonal bands
CSF cell count
CSF HSV PCR
neuropsychological testing
Mini-Cog
NIH Stroke Scale
NIHSS
Glasgow Coma Scale
GCS
CAM-ICU
Richmond Agitation-Sedation Scale
Braden score
Morse Fall Scale
CIWA-Ar
Clinical Opiate Withdrawal Scale
GAD-7
PHQ-2
AUDIT-C
Edinburgh Postnatal Depression Scale
CHA2DS2-VASc score
HAS-BLED score
TIMI score
HEART score
CURB-65
qSOFA
SOFA score
APACHE II score
MELD score
Child-Pugh score
Glasgow-Blatchford score
ASCVD risk score
FRAX score
Caprini score
PESI score
modified Rankin Scale
Alvarado score
Bishop score
Centor score
ECOG performance status
Timed Up and Go test
Berg Balance Scale
Epworth Sleepiness Scale
STOP-BANG questionnaire
slit lamp examination
dilated fundus exam
fluorescein angiography
gonioscopy
pachymetry
Weber test
Rinne test
otoacoustic emissions
videonystagmography
Dix-Hallpike maneuver
hydrogen breath test
colonic transit study
urine cytology
stone analysis
ABO typing
phenytoin level
carbamazepine level
cyclosporine level
methotrexate level
ethylene glycol level
hs-CRP
lipoprotein(a)
apolipoprotein B
non-HDL cholesterol
direct LDL
continuous glucose monitoring
urine microalbumin
cystatin C
creatinine clearance
BUN/creatinine ratio
serial troponins
myoglobin
aldolase
catheter tip culture
respiratory culture
synovial fluid crystal analysis
serum-ascites albumin gradient
""")


ANATOMY_MORE3 = words("""
left lung base
right lung base
bilateral lung bases
right lung apex
left hilum
right hilum
left costophrenic angle
anterior mediastinum
posterior mediastinum
left mainstem bronchus
bronchus intermedius
visceral pleura
parietal pleura
left hemithorax
left chest wall
right axilla
left axilla
retroareolar region
inframammary fold
left ventricular outflow tract
interatrial septum
left atrial appendage
sinoatrial node
atrioventricular node
aortic root
proximal LAD
mid LAD
first diagonal branch
obtuse marginal branch
posterior descending artery
left internal mammary artery
saphenous vein graft
right common carotid artery
left internal carotid artery
carotid bifurcation
left subclavian artery
innominate artery
left renal vein
inferior mesenteric artery
splenic artery
common hepatic artery
gastroduodenal artery
internal iliac artery
common femoral artery
anterior tibial artery
peroneal artery
small saphenous vein
left internal jugular vein
external jugular vein
left antecubital fossa
circle of Willis
right middle cerebral artery
superior sagittal sinus
cavernous sinus
left frontal lobe
right parietal lobe
left temporal lobe
left cerebellar hemisphere
cerebellar vermis
midbrain
fourth ventricle
third ventricle
caudate nucleus
putamen
corona radiata
periventricular white matter
subarachnoid space
dura mater
meninges
foramen magnum
sella turcica
optic chiasm
oculomotor nerve
abducens nerve
hypoglossal nerve
phrenic nerve
recurrent laryngeal nerve
femoral nerve
common peroneal nerve
tibial nerve
radial nerve
axillary nerve
pudendal nerve
L3-L4
C6-C7
L1 vertebral body
S1 nerve root
conus medullaris
thecal sac
neural foramen
spinous process
right sacroiliac joint
right iliac fossa
left hemidiaphragm
right hemidiaphragm
left hepatic lobe
caudate lobe
porta hepatis
gallbladder neck
cystic duct
intrahepatic bile ducts
ampulla of Vater
pancreatic duct
uncinate process
splenic hilum
lesser curvature
gastric cardia
duodenal bulb
ligament of Treitz
ileocecal valve
rectosigmoid junction
dentate line
internal anal sphincter
pouch of Douglas
Morison pouch
right paracolic gutter
right adrenal gland
renal cortex
ureteropelvic junction
ureterovesical junction
bladder dome
trigone
prostatic urethra
seminal vesicles
vas deferens
spermatic cord
left testicle
right ovary
left adnexa
uterine fundus
lower uterine segment
myometrium
labia majora
zygomatic arch
orbital floor
nasal bones
hyoid bone
thyroid cartilage
cricoid cartilage
piriform sinus
vallecula
base of tongue
floor of mouth
buccal mucosa
palatine tonsils
ethmoid sinus
sphenoid sinus
inferior turbinate
inner ear
semicircular canals
eustachian tube
anterior chamber
fovea
choroid
lower eyelid
medial canthus
nasolacrimal duct
left supraclavicular fossa
sternocleidomastoid muscle
left elbow
right forearm
right wrist
left hand
left thumb
distal interphalangeal joint
proximal interphalangeal joint
metacarpophalangeal joint
thenar eminence
carpal tunnel
anatomical snuffbox
triangular fibrocartilage complex
radial head
glenoid labrum
subacromial bursa
acromion
coracoid process
femoral head
femoral shaft
distal femur
posterior cruciate ligament
lateral collateral ligament
patellar tendon
tibial tuberosity
popliteal fossa
proximal tibia
fibular head
right ankle
left foot
dorsum of the foot
navicular
cuboid
Lisfranc joint
subtalar joint
anterior talofibular ligament
right great toe
nail bed
right calf
right thigh
gluteal cleft
left buttock
lumbosacral junction
thoracolumbar junction
upper back
bilateral upper extremities
bilateral knees
suprasternal notch
manubrium
costovertebral angle
left costovertebral angle
fifth intercostal space
midclavicular line
""")


MEDICATIONS_MORE3 = words("""
amlodipine-benazepril
Lotrel
losartan-hydrochlorothiazide
Hyzaar
lisinopril-hydrochlorothiazide
Zestoretic
valsartan-hydrochlorothiazide
amlodipine-valsartan
Exforge
amlodipine-atorvastatin
Caduet
bisoprolol-hydrochlorothiazide
Ziac
ezetimibe-simvastatin
Vytorin
sitagliptin-metformin
empagliflozin-linagliptin
Glyxambi
Synjardy
Xigduo XR
glipizide-metformin
Soliqua
Xultophy
Humulin N
Novolin R
Fiasp
Lyumjev
Semglee
Wegovy
Zepbound
Saxenda
exenatide
Byetta
pramlintide
nateglinide
colesevelam
Welchol
ertugliflozin
Invokana
alogliptin
Onglyza
Actos
Amaryl
Glucotrol
bempedoic acid
Nexletol
alirocumab
Praluent
inclisiran
Leqvio
niacin
gemfibrozil
Tricor
Lovaza
Vascepa
pitavastatin
Livalo
lovastatin
indapamide
amiloride
Dyazide
Demadex
finerenone
Kerendia
quinapril
fosinopril
captopril
trandolapril
perindopril
Vasotec
Altace
Lotensin
Avapro
Benicar
Micardis
azilsartan
Edarbi
aliskiren
nadolol
Bystolic
Tenormin
felodipine
Procardia XL
clevidipine
Cleviprex
methyldopa
terazosin
Cardura
ivabradine
Corlanor
Ranexa
Nitrostat
mexiletine
Tikosyn
Pacerone
Betapace
Lanoxin
vericiguat
Camzyos
tafamidis
Savaysa
dalteparin
Fragmin
Arixtra
Effient
aspirin-dipyridamole
Aggrenox
Pletal
pentoxifylline
Praxbind
Andexxa
Activase
TNKase
eptifibatide
cangrelor
Breztri Aerosphere
Dulera
Wixela Inhub
Arnuity Ellipta
Qvar
Incruse Ellipta
Stiolto Respimat
Yupelri
Xopenex
Combivent Respimat
Daliresp
Nucala
Fasenra
Tezspire
zafirlukast
Tessalon Perles
guaifenesin-codeine
Delsym
Ofev
Trikafta
Kalydeco
riociguat
bosentan
ambrisentan
macitentan
treprostinil
selexipag
Dexilant
rabeprazole
vonoprazan
cimetidine
Maalox
Gaviscon
Arthrotec
Bentyl
Amitiza
plecanatide
prucalopride
methylnaltrexone
Relistor
naloxegol
Movantik
Senokot
Fleet enema
glycerin suppository
milk of magnesia
Suprep
eluxadoline
Lomotil
diphenoxylate-atropine
Pentasa
Canasa
Uceris
Imuran
Cimzia
ozanimod
guselkumab
Tremfya
Marinol
Emend
fosaprepitant
granisetron
Transderm Scop
Antivert
Compazine
droperidol
Actigall
obeticholic acid
Bactrim DS
Macrobid
Levaquin
tetracycline
tinidazole
Omnicef
cefixime
cefadroxil
cefotetan
Rocephin
ceftazidime-avibactam
ceftolozane-tazobactam
cefiderocol
Invanz
Zosyn
Unasyn
Bicillin L-A
Zyvox
tedizolid
Cubicin
dalbavancin
tigecycline
colistin
polymyxin B
Dificid
bezlotoxumab
rifabutin
bedaquiline
Xofluza
Tamiflu
Valtrex
ganciclovir
foscarnet
letermovir
molnupiravir
nirmatrelvir-ritonavir
Veklury
Mavyret
Harvoni
tenofovir alafenamide
Truvada
Descovy
cabotegravir
Cabenuva
Genvoya
Triumeq
Dovato
Tivicay
darunavir
ritonavir
efavirenz
lamivudine
Diflucan
itraconazole
Cresemba
caspofungin
AmBisome
flucytosine
miconazole
ciclopirox
Jublia
griseofulvin
artemether-lumefantrine
Malarone
pentamidine
praziquantel
mebendazole
nitazoxanide
Tdap vaccine
Boostrix
MMR vaccine
Shingrix
Pneumovax 23
Prevnar 20
influenza vaccine
Fluzone High-Dose
FluMist
Comirnaty
Spikevax
Arexvy
Abrysvo
nirsevimab
Beyfortus
palivizumab
Engerix-B
Heplisav-B
Havrix
Twinrix
Gardasil 9
Menveo
Bexsero
RotaTeq
rabies immune globulin
yellow fever vaccine
clobetasol propionate ointment
betamethasone dipropionate
fluocinolone
Elocon
desoximetasone
halobetasol
Lidoderm
lidocaine-prilocaine
EMLA cream
capsaicin cream
Pennsaid
bacitracin
Neosporin
retapamulin
Santyl
zinc oxide
calamine lotion
ammonium lactate
crisaborole
Protopic
Elidel
ruxolitinib cream
tapinarof
Taclonex
tazarotene
Differin
Retin-A
Epiduo
clindamycin-benzoyl peroxide
azelaic acid
MetroGel
Soolantra
imiquimod
Efudex
salicylic acid
hydroquinone
crotamiton
moxifloxacin eye drops
Vigamox
tobramycin-dexamethasone
TobraDex
erythromycin ophthalmic ointment
polymyxin B-trimethoprim
Polytrim
Pred Forte
loteprednol
Lotemax
difluprednate
Durezol
nepafenac
travoprost
Lumigan
netarsudil
brinzolamide
Combigan
dorzolamide
Timoptic
lifitegrast
Xiidra
Pataday
ketotifen eye drops
tropicamide
Vabysmo
faricimab
Systane
Ciprodex
Debrox
cenobamate
brivaracetam
perampanel
eslicarbazepine
ethosuximide
primidone
Epidiolex
Valtoco
Nurtec ODT
ubrogepant
Ubrelvy
atogepant
Qulipta
galcanezumab
Emgality
Ajovy
Imitrex
zolmitriptan
eletriptan
dihydroergotamine
butalbital-acetaminophen-caffeine
Botox
lecanemab
Leqembi
Exelon patch
selegiline
opicapone
Mirapex
Requip
rotigotine
apomorphine
Cogentin
trihexyphenidyl
tetrabenazine
deutetrabenazine
Austedo
valbenazine
Ingrezza
Mestinon
eculizumab
efgartigimod
Copaxone
Tecfidera
ofatumumab
Kesimpta
Tysabri
dalfampridine
Robaxin
carisoprodol
metaxalone
vilazodone
Pristiq
phenelzine
imipramine
Pamelor
Spravato
esketamine
zuranolone
Auvelity
Rexulti
Vraylar
Caplyta
Geodon
Invega
Clozaril
Lybalvi
Cobenfy
perphenazine
Abilify Maintena
haloperidol decanoate
lithium carbonate
BuSpar
Vistaril
Restoril
Librium
Lunesta
Belsomra
ramelteon
Provigil
armodafinil
solriamfetol
sodium oxybate
Ritalin
Focalin XR
Adderall XR
dextroamphetamine
Strattera
Qelbree
Intuniv
Sublocade
buprenorphine-naloxone
lofexidine
Antabuse
nicotine gum
Nicorette
oxycodone-acetaminophen
Roxicodone
Nucynta
Ultram
Duragesic
Butrans
meperidine
acetaminophen-codeine
nalbuphine
etodolac
piroxicam
sulindac
oxaprozin
salsalate
Indocin
Actemra
sarilumab
Orencia
anakinra
baricitinib
ixekizumab
Sotyktu
tralokinumab
Benlysta
voclosporin
Arava
Neoral
Rapamune
mycophenolic acid
belatacept
basiliximab
Thymoglobulin
pegloticase
Krystexxa
Zyloprim
Xtandi
Zytiga
apalutamide
darolutamide
degarelix
goserelin
Eligard
Casodex
Faslodex
Femara
ribociclib
abemaciclib
Lynparza
niraparib
Enhertu
Kadcyla
Perjeta
tucatinib
sacituzumab govitecan
Tecentriq
Imfinzi
Yervoy
cemiplimab
erlotinib
alectinib
lorlatinib
sotorasib
Erbitux
panitumumab
Lonsurf
regorafenib
sorafenib
lenvatinib
cabozantinib
sunitinib
axitinib
dabrafenib
trametinib
Imbruvica
acalabrutinib
zanubrutinib
Venclexta
obinutuzumab
Darzalex
Velcade
carfilzomib
pomalidomide
thalidomide
blinatumomab
dasatinib
nilotinib
Jakafi
Hydrea
decitabine
arsenic trioxide
daunorubicin
fludarabine
pegaspargase
vinorelbine
Abraxane
Taxotere
ifosfamide
mesna
melphalan
bleomycin
topotecan
Temodar
ramucirumab
Zarxio
Aranesp
Retacrit
romiplostim
Promacta
luspatercept
Zometa
Xgeva
ibandronate
Reclast
romosozumab
Forteo
conjugated estrogens
Estrace
Vagifem
fezolinetant
Prometrium
Mirena
Plan B One-Step
Yaz
Sprintec
NuvaRing
Clomid
bromocriptine
carboprost
Methergine
doxylamine-pyridoxine
Diclegis
Detrol
Vesicare
fesoterodine
vibegron
silodosin
Avodart
Elmiron
vardenafil
alprostadil
Androgel
testosterone enanthate
potassium citrate
methenamine hippurate
Levoxyl
Tirosint
Tapazole
potassium iodide
Sensipar
paricalcitol
lanthanum carbonate
ferric citrate
Veltassa
tolvaptan
DDAVP
Cortef
Solu-Medrol
Medrol Dosepak
Decadron
lanreotide
Gvoke
Baqsimi
NovoSeven
emicizumab
aminocaproic acid
Intralipid
potassium phosphate
calcium citrate
ferrous fumarate
Feraheme
Injectafer
iron dextran
hydroxocobalamin
pyridoxine
zinc sulfate
glycopyrrolate
neostigmine
physostigmine
methylene blue
deferoxamine
CroFab
vecuronium
cisatracurium
etomidate
remifentanil
ropivacaine
Exparel
chlorhexidine gluconate
povidone-iodine
Xyzal
desloratadine
chlorpheniramine
Nasacort
Dymista
cromolyn
Auvi-Q
""")


THIRD = {
    "FIRST": FIRST_NAMES_MORE3,
    "LAST": LAST_NAMES_MORE3,
    "CITY": CITIES_MORE3,
    "STREET_NAME": STREET_NAMES_MORE3,
    "HOSP_HEAD": HOSPITAL_HEADS_MORE3,
    "COND": CONDITIONS_MORE3,
    "MED": MEDICATIONS_MORE3,
    "PROC": PROCEDURES_MORE3,
    "ANAT": ANATOMY_MORE3,
    "TEST": TESTS_MORE3,
}

EDITIONS = [SECOND, THIRD]
